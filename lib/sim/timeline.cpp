#include "sim/timeline.hpp"

#include <algorithm>

namespace ppsched {

std::string_view stream_name(Stream s) {
  switch (s) {
    case Stream::Compute:
      return "compute";
    case Stream::Send:
      return "send";
    case Stream::Recv:
      return "recv";
  }
  return "compute";
}

std::uint32_t Timeline::rank_of(std::uint32_t entry) const {
  auto it = std::upper_bound(rank_begin.begin(), rank_begin.end(), entry);
  return static_cast<std::uint32_t>(it - rank_begin.begin() - 1);
}

}  // namespace ppsched
