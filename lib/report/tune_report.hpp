// The faces of `ppsched tune`'s result (tune/tune.hpp): a ranked table, and the same as JSON.
//
//   # ppsched tune: 8 ranks, global batch 64 (every microbatch count that divides it), memory cap 80 GiB per rank
//   # model llama3-8b-like on h100 (roofline); time model: pytorch: ...
//   rank  schedule               shape               iteration   samples/s  bubble       peak  verdict
//      1  ZBVZeroBubble          v=2 m=64 b=1          6.418 s        9.97    4.1%   61.2 GiB  best
//
// A rank is given only to the trials that fit; the verdict compares each with the best. The text
// shows the first `top` rows; JSON has them all.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tune/tune.hpp"

namespace ppsched {

/// Where the costs and sizes came from, as the report's header states them.
struct TuneSources {
  std::string cost;        ///< the per-rank shorthand in use ("F=1,I=1,W=1,B=2 (unit)" by default)
  std::string costs_file;  ///< empty: none
  std::string topology;
  std::string stage_spec;
  std::string model;               ///< model file; empty: none
  std::string model_name;          ///< the model's own name
  std::string gpu;                 ///< accelerator of the roofline; empty: measured times only
  std::string time_model;          ///< the runtime model's one-line summary
  bool times_in_us = false;        ///< costs are microseconds (a model or a cost table): times and throughput get units
  bool memory_in_bytes = false;    ///< peaks are bytes (a model or a stage spec, under the byte model)
  std::size_t top = 10;            ///< rows of the text table; 0: all
  std::vector<std::string> notes;  ///< said in the header (shapes left out, and why)
};

std::string tune_text(const TuneRequest& request, const TuneSources& sources, const TuneResult& result);
std::string tune_json(const TuneRequest& request, const TuneSources& sources, const TuneResult& result);
/// A self-contained HTML page (tune_html.cpp): every candidate that ran as a dot of iteration time
/// against peak memory, the cap as a line, the pick ringed; hovering a dot names it.
std::string tune_html(const TuneRequest& request, const TuneSources& sources, const TuneResult& result);

/// The header's notes on the stages per rank the model's blocks leave out of `request` ("4 stage(s)
/// per rank not tried: 16 stages exceed the model's 12 blocks"); none when a table or spec fixes
/// the stage count (`only_stages`), which says so itself.
std::vector<std::string> untried_shape_notes(const TuneRequest& request);

/// The tables' last line on the rows past the first `shown`: "# 74 more not shown (6 slower, 55 over
/// the cap, 13 cannot run); --top 0 shows all", or nothing when every row was shown. Any row type
/// with `fits` and `ran` (a trial, a layout).
template <class Row>
std::string rows_not_shown(const std::vector<Row>& rows, std::size_t shown) {
  if (shown >= rows.size()) return {};
  std::size_t fit = 0, over = 0, cannot = 0;
  for (std::size_t i = shown; i < rows.size(); ++i) ++(rows[i].fits ? fit : rows[i].ran ? over : cannot);
  return "# " + std::to_string(rows.size() - shown) + " more not shown (" + std::to_string(fit) + " slower, " +
         std::to_string(over) + " over the cap, " + std::to_string(cannot) + " cannot run); --top 0 shows all\n";
}

/// "71.3 GiB" for bytes, "4.5" for microbatches of activation or PyTorch's slots.
std::string format_tune_memory(double value, bool in_bytes);

}  // namespace ppsched
