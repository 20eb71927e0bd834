// The error a user's input causes: flags that contradict each other, parameters no schedule can
// meet, a family that does not take a setting. The library throws it with the whole message; the
// CLI reports it once, as a usage error (exit 2). Kept apart from std::invalid_argument, which the
// standard library also throws (std::stoll, std::bitset) for what would be a bug here.
#pragma once

#include <stdexcept>
#include <string>

namespace ppsched {

class UserError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ppsched
