// The HTML face of `ppsched simulate --html`: one self-contained page for people, with no
// network at view time (no script or style from elsewhere; everything is inlined here).
//
//   <section id="summary">   iteration time, makespan, both bubble ratios, peak memory
//   <section id="timeline">  the SVG Gantt chart (svg_gantt.hpp), zoomable: the buttons and
//                            Ctrl+wheel widen or narrow it inside a scrolling box
//   <section id="memory">    each rank's memory over time as a step line, against the cap
//   <section id="bubbles">   each rank's idle time by cause (bubble_view's split)
//
// The page's own script only zooms (a link ending in #zoom=4 opens it zoomed), and marks
// <body data-ready="1"> once it has run (the browser test waits for that). Long runs stay bounded: the Gantt chart
// merges narrow boxes, and each memory line keeps at most kMaxMemoryPoints points, the highest in each slice of time,
// so no peak is lost.
#pragma once

#include <string>
#include <string_view>

#include "io/byte_sink.hpp"
#include "ir/schedule.hpp"
#include "report/sim_views.hpp"
#include "sim/analysis.hpp"
#include "sim/timeline.hpp"

namespace ppsched {

struct HtmlReportInput {
  const Schedule& schedule;
  const Timeline& timeline;
  const SimAnalysis& analysis;  ///< its memory profile holds each rank's step function
  SimReportOptions options;     ///< the memory cap and the time model, as the text views take them
  std::string title;            ///< the page's heading
  std::string time_unit;        ///< "us", or the costs' own unit
};

inline constexpr std::size_t kMaxMemoryPoints = 2000;

/// Text made safe for HTML element content and attribute values (&, <, >, "): the one escaping
/// of the HTML pages (this report and tune's).
std::string html_escaped(std::string_view text);

void write_html_report(const HtmlReportInput& in, ByteSink& out);

}  // namespace ppsched
