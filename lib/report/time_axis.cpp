#include "report/time_axis.hpp"

#include <fmt/format.h>

#include <cmath>

namespace ppsched {

std::string short_time_text(double v) {
  // Past 10,000 a thousands or millions suffix, never an exponent: "418.9k", not "4.189e+05".
  const double a = std::fabs(v);
  if (a >= 1e10) return fmt::format("{:.4g}G", v / 1e9);
  if (a >= 1e7) return fmt::format("{:.4g}M", v / 1e6);
  if (a >= 1e4) return fmt::format("{:.4g}k", v / 1e3);
  return fmt::format("{:.4g}", v);
}

double nice_axis_step(double raw) {
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw * (1 - 1e-12)) return m * mag;  // tolerance: raw may be 2.0000000001
  return 10 * mag;
}

}  // namespace ppsched
