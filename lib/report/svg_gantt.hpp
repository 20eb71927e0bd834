// The SVG Gantt chart: a standalone SVG 1.1 picture of a simulated schedule, for docs, pull
// requests and browsers.
//
//   <svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="1200" height="208" ...>
//   <style type="text/css"><![CDATA[ ... .kF{fill:#6baed6} .kB{fill:#fd8d3c} ... ]]></style>
//   <text class="h" x="62" y="20">ppsched: 4 ranks, 160 actions, makespan 33 units</text>
//   <text class="r" x="56" y="46">rank 0</text>
//   <g class="g">
//   <rect class="kF" x="62" y="34.24" width="34" height="15.68"><title>0F0 (rank 0): 0 to 1</title></rect>
//   <text class="l" x="79" y="42.08">0F0</text>
//   <rect class="kC m" x="96" y="51.04" width="0.5" height="3.36"><title>0SEND_F0 (rank 0): 1 to
//   1</title></rect>
//   ...
//
// How to read it: one row per rank, time left to right over [0, makespan] with a tick axis
// under the rows. The tall box of a row is its compute stream; when the timeline has send and
// recv streams and rows are tall enough (or SvgOptions::comm_lanes says so), two thin lanes
// under it show the send and recv streams. Colours by kind, from Okabe and Ito's colour-blind-safe
// palette: F, B, I, W, OVERLAP_F_B, comm (SEND/RECV) and FSDP (UNSHARD, RESHARD, REDUCE_GRAD),
// with a legend at the bottom; a rank's second chunk (its later stage) is the same colour
// lighter. A box holds its action's text when the text fits, set smaller (down to 6 px) before
// it is left out; hovering shows a tooltip (<title>) with the action and its times. The time
// axis says its unit (SvgOptions::time_unit) and labels ticks without exponents ("418.9k").
//
// Scaling: rows are 28 px up to max_chart_height / ranks (about 6 px at 256 ranks, where box
// labels no longer fit and are dropped, and rank labels thin out to every 2nd, 4th ... rank).
// The file stays bounded: boxes narrower than chart width x lanes / max_boxes pixels are
// merged with their neighbours (gaps that narrow included) into one box. A merged box of one kind
// has its colour; one of several kinds is striped, each kind's height its share of the box's
// time, with a tooltip counting its actions and giving the shares (a box coloured by its
// commonest kind would draw ZBV at 64 ranks as nearly all forwards, though it runs F, I and W
// alike). So a chart has at most about 2 x max_boxes boxes, whatever the timeline's size (its
// size on a large run: docs/bench.md, "Traces and SVG").
//
// Not here: the terminal chart (ascii_gantt.hpp) and the zoomable trace (trace_view.hpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "io/byte_sink.hpp"
#include "ir/schedule.hpp"
#include "sim/timeline.hpp"

namespace ppsched {

/// Options of write_svg_gantt.
struct SvgOptions {
  double width = 1200;             ///< image width in px
  double row_height = 0;           ///< px per rank; 0: 28, less when max_chart_height needs it
  double max_chart_height = 1600;  ///< px for all rows when row_height is 0
  /// Thin send/recv lanes under each rank's compute row. Unset: when the timeline has entries
  /// on those streams and rows are at least 14 px tall.
  std::optional<bool> comm_lanes;
  bool labels = true;             ///< action text inside the boxes it fits in
  bool tooltips = true;           ///< a <title> per box
  std::size_t max_boxes = 40000;  ///< merging threshold, see above (at least 1)
  std::string title;              ///< heading; empty: ranks, actions and makespan
  std::string time_unit;          ///< shown after the axis times' caption ("time (us)")
  /// Each idle stretch of a compute row tinted by its cause (warm-up, cool-down, waiting for a
  /// dependency, a transfer, or a shared GPU), as the bubbles view splits it; the HTML report's.
  bool idle_causes = false;
  /// An arrow from each SEND to where its RECV ends, across rows, when there are at most
  /// max_arrows of them (beyond that they would hide the boxes); the HTML report's.
  bool transfers = false;
  std::size_t max_arrows = 4000;
};

/// Writes the chart of `t` (the timeline of `s`) to `out`. Throws std::invalid_argument for
/// bad options or a timeline of another schedule, and std::logic_error for a timeline whose
/// entries name steps or streams that do not exist: the caller's bugs, not a user's error
/// (UserError), since simulate's --width admits 200 to 200000 px and no flag sets the rest.
void write_svg_gantt(const Schedule& s, const Timeline& t, ByteSink& out, const SvgOptions& opt = {});

}  // namespace ppsched
