// The faces of `ppsched simulate`: the report of a timed simulation (its views, in text or as
// one JSON document), the report of PyTorch's lock-step dry run, the deadlock message and the
// HTML page's title. The views themselves are report/sim_views.hpp's; this file puts them in
// order around what was simulated and how.
//
//   {"schema_version": 1,
//    "input": {"schedule": "1F1B", "ranks": 4, "microbatches": 8, "lower": "none"},
//    "parameters": {"model": "timed", "runtime": "pytorch", ..., "gpu": ""},
//    "summary": {...}, "bubbles": {...}, "memory": {...}}
//
// The views come in the JSON order of the table (json_position), then "activation_liveness"
// under --memory-model pytorch-liveness. The text report is the chosen views in the table's
// order a blank line apart, the liveness view, then the ASCII Gantt chart when asked for. The
// lock-step report (pytorch-steps) has "input", "parameters": {"model": "pytorch-steps"}, then
// "steps" and "timeline" (report/steps_view.hpp); its CSV face is PyTorch's grid, written by
// parse/pytorch_csv.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/schedule.hpp"
#include "report/liveness_view.hpp"
#include "report/sim_views.hpp"
#include "sim/p2p_queues.hpp"
#include "sim/send_mode.hpp"
#include "sim/timed.hpp"

namespace ppsched {

/// What was simulated, as the report's "input" block states it: a file, or a family's shape.
struct SimulateSource {
  std::string file;      ///< the file as given ("-": stdin); stated when `schedule` is empty
  std::string schedule;  ///< the family synthesized; empty for a file
  std::uint32_t ranks = 0, microbatches = 0;
  std::uint32_t stages_per_rank = 0;  ///< 0: the family's default, left out of the block
  std::string lower = "none";         ///< --lower
};

/// How the timed simulator was set up, as the report's "parameters" block states it: each flag's
/// value as given ("" when not), and the time model they make.
struct SimulateParameters {
  std::string runtime = "pytorch";
  Optimizer optimizer = Optimizer::Sync;
  std::string runtime_params;  ///< --runtime-params
  std::string time_model;      ///< time_model_description, with the recomputation when any
  bool blocking_comms = false;
  double overlap_factor = 1.0;
  std::string cost;  ///< the per-rank shorthand in use ("F=1,I=1,W=1,B=2 (unit)" by default)
  std::string costs_file, topology, stage_spec, model_file, gpu;
  /// Stated only when eager, so that reports made without --send-mode keep their bytes.
  SendMode send;
  /// Stated only when not per-rank, for the same reason.
  P2pQueues p2p_queues = P2pQueues::PerRank;
};

/// A timed simulation's report: which views, around what was simulated and how.
struct SimulateReport {
  SimulateSource source;
  SimulateParameters parameters;
  std::vector<std::string> views;            ///< --views names (sim_view_names), any order
  const LivenessReport* liveness = nullptr;  ///< PyTorch's slots, under pytorch-liveness; null: none
  std::size_t gantt_width = 0;               ///< text: an ASCII Gantt chart this wide; 0: none
};

/// Whether the report needs when each action ran (a Timeline), or the aggregates serve: a chosen
/// view's face in that format needs one, or a Gantt chart is asked for.
bool simulate_report_needs_timeline(const SimulateReport& report, bool json);

std::string simulate_text(const SimulateReport& report, const SimViewInput& in);
std::string simulate_json(const SimulateReport& report, const SimViewInput& in);

/// The lock-step dry run's JSON document; its text face is steps_text (report/steps_view.hpp).
std::string pytorch_steps_json(const SimulateSource& source, const Schedule& timeline);

/// The error text for a deadlock of the timed simulator on `s`: the verdict, then a note per
/// stuck rank with the action it is stuck at and what it waits for (steps_deadlock_text is the
/// lock-step twin).
std::string timed_deadlock_text(const TimedDeadlock& d, const Schedule& s);

/// The HTML report's heading: "ppsched simulate: zbv.csv", or the family's shape.
std::string simulate_title(const SimulateSource& source);

}  // namespace ppsched
