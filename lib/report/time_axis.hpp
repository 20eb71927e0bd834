// Time labels and tick spacing shared by the Gantt views (ASCII and SVG), so both charts of one
// run label the same instants with the same text.
#pragma once

#include <string>

namespace ppsched {

/// Up to 4 significant digits, never an exponent: "0", "12", "115.5", "0.25", and from 10,000 on
/// a k, M or G suffix ("418.9k").
std::string short_time_text(double v);

/// The smallest 1, 2 or 5 x 10^k that is at least `raw` (> 0): a tick step people read easily.
double nice_axis_step(double raw);

}  // namespace ppsched
