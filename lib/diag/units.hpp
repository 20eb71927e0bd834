// Sizes as people read them: one home for how ppsched prints a byte count in text.
#pragma once

#include <string>

namespace ppsched {

/// "512 B", "1.50 KiB", "2.42 GiB", "16.0 TiB": binary units, three significant digits, so
/// that 17179869184 reads "16.0 GiB" and not "1.71799e+10". JSON keeps the exact count.
std::string human_bytes(double bytes);

}  // namespace ppsched
