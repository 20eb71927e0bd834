// The terminal Gantt chart: one line per rank showing what its compute stream does over time.
//
//   rank 0 |FF..BB.BB|
//   rank 1 |.FBBFBB..|
//           0    5   9
//   F forward, B backward, I input grad, W weight grad, O OVERLAP_F_B, . idle; 1 column = 1
//
// How to read it: `width` columns split [0, makespan] into equal slices of time; each shows the
// kind that takes most of that slice on the rank's compute stream ('.' when idle does). Ties
// go to the earlier of F B I W O u r g c, and to any action over idle. Actions that are not
// compute but ran on the compute stream show as u (UNSHARD), r (RESHARD), g (REDUCE_GRAD) and
// c (a SEND or RECV); the legend names them only when they appear. Send and recv streams are
// not drawn (the Chrome trace and the SVG show them). The scale line puts a time under the
// column where it falls (round numbers) and the makespan under the closing bar.
//
// Deterministic: the same input gives the same bytes. For pictures, see svg_gantt.hpp; for
// zooming into a big run, trace_view.hpp.
#pragma once

#include <cstddef>
#include <string>

#include "ir/schedule.hpp"
#include "sim/timeline.hpp"

namespace ppsched {

/// Options of ascii_gantt.
struct AsciiOptions {
  std::size_t width = 100;  ///< columns of the chart (at least 1)
  bool scale = true;        ///< the time scale line under the rows
  bool legend = true;       ///< the legend line at the end
};

/// The chart of `t` (the timeline of `s`), one '\n'-terminated line each. Throws
/// std::invalid_argument for a timeline of another schedule or a width of 0, and
/// std::logic_error for a timeline whose entries name steps that do not exist: the caller's
/// bugs, not a user's error (UserError), since simulate's --gantt admits 10 to 1000 columns.
std::string ascii_gantt(const Schedule& s, const Timeline& t, const AsciiOptions& opt = {});

}  // namespace ppsched
