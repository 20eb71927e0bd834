#include "diag/units.hpp"

#include <fmt/format.h>

#include <cmath>

namespace ppsched {

std::string human_bytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (!std::isfinite(bytes)) return fmt::format("{} B", bytes);
  const char* sign = bytes < 0 ? "-" : "";
  double v = std::fabs(bytes);
  std::size_t unit = 0;
  while (v >= 1024 && unit + 1 < std::size(kUnits)) {
    v /= 1024;
    ++unit;
  }
  if (unit == 0) return fmt::format("{}{:g} B", sign, v);
  // Three significant digits; a value that rounds up to 1024 moves to the next unit.
  std::string text = v >= 100  ? fmt::format("{:.0f}", v)
                     : v >= 10 ? fmt::format("{:.1f}", v)
                               : fmt::format("{:.2f}", v);
  if (text == "1024" && unit + 1 < std::size(kUnits)) return fmt::format("{}1.00 {}", sign, kUnits[unit + 1]);
  return fmt::format("{}{} {}", sign, text, kUnits[unit]);
}

}  // namespace ppsched
