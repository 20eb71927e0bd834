// Views of a simulated schedule, each with a text face for people and a JSON face for tools.
// Every one reads (schedule, timeline, analysis) and the report's options, nothing else;
// `simulate --format json` gathers their JSON faces into one document keyed by view name. The
// table sim_views() lists them once, for simulate's --views, its default, the JSON document's
// keys and the text report's order.
//
// summary        makespan; per rank busy and idle time; the bubble ratio under both
//                definitions; peak memory
//                  makespan 27 | bubble 11.1% (global) 11.1% (per stage) | peak memory 4 mb (rank 0 at t=3)
// bubbles        each rank's idle time split into warm-up (before its first compute),
//                cool-down (after its last), waiting for a dependency, waiting for a transfer
// critical_path  the chain of actions, and of the edges between them, that sets the makespan
// memory         per rank: the peak, when it is reached, and the memory over time
// stage-costs    per stage: the layers a model file put there, its F, I, W and B times and the
//                bytes it holds (static, M_B, M_W) as the simulator used them; on request only
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/schedule.hpp"
#include "model/comm.hpp"
#include "model/costs.hpp"
#include "sim/analysis.hpp"
#include "sim/memory.hpp"
#include "sim/runtime.hpp"
#include "sim/timeline.hpp"

namespace ppsched {

/// What the report is asked about a simulated schedule beyond what the simulator computed: the
/// simulator knows nothing of a cap, the summary and memory views say which peaks are over it
/// (by fits_under_cap, sim/memory.hpp: the same test as simulate's exit code).
struct SimReportOptions {
  double memory_cap = 0;   ///< per rank, in the memory model's unit; <= 0: none
  std::string time_model;  ///< what the times describe (the runtime model), for the summary; empty: not said
  Optimizer optimizer = Optimizer::Sync;  ///< which time one iteration costs (sim/runtime.hpp)
};

/// A memory figure in text: "2.42 GiB" for bytes, "4 microbatches" otherwise.
std::string memory_amount(double value, bool in_bytes);

std::string summary_text(const SimAnalysis& a, const SimReportOptions& opt = {});
nlohmann::ordered_json summary_json(const SimAnalysis& a, const SimReportOptions& opt = {});

std::string bubbles_text(const SimAnalysis& a);
nlohmann::ordered_json bubbles_json(const SimAnalysis& a);

/// The critical path, last action first followed back to time 0; text shows at most `max_lines`.
std::string critical_path_text(const Schedule& s, const Timeline& t, std::size_t max_lines = 40);
nlohmann::ordered_json critical_path_json(const Schedule& s, const Timeline& t);

std::string memory_text(const SimAnalysis& a, const SimReportOptions& opt = {});
/// With `with_timeline`, each rank's memory over time too (the step function, which only the
/// Timeline path fills in).
nlohmann::ordered_json memory_json(const SimAnalysis& a, const SimReportOptions& opt = {});
/// Each rank's memory over time: the step function's change points (time, value), one line or
/// one array per rank. Per action, so long: only where asked for (--views memory-timeline).
std::string memory_timeline_text(const SimAnalysis& a);
nlohmann::ordered_json memory_timeline_json(const SimAnalysis& a);

/// What each stage cost the simulator: its costs as simulated (recompute included), its stage
/// spec's bytes (M_B and M_W as given, before checkpointing keeps less), and, when a model file gave
/// them, the layers of each stage ("embedding + 3 blocks").
struct StageCosts {
  const CostModel& costs;
  const std::vector<StageSpec>& spec;      ///< empty: no stage spec (no bytes known)
  const std::vector<std::string>& layers;  ///< per stage; empty without a model
  std::uint32_t stages = 0;
  bool times_in_us = false;  ///< a cost table or a model gave them; else the costs' own unit
};

std::string stage_costs_text(const StageCosts* c);
nlohmann::ordered_json stage_costs_json(const StageCosts* c);

/// What every view reads. `timeline` may be empty (the aggregates run) unless a chosen face
/// needs it (SimView::text_needs_timeline, json_needs_timeline).
struct SimViewInput {
  const Schedule& schedule;
  const Timeline& timeline;
  const SimAnalysis& analysis;
  SimReportOptions options;
  const StageCosts* stage_costs = nullptr;  ///< null: the view says it was not given them
};

/// One view: its name in --views, its key in the JSON document, its two faces, and whether each
/// face reads when the actions ran (else the aggregates, which need no Timeline, serve).
struct SimView {
  std::string_view name;      ///< "critical-path"
  std::string_view json_key;  ///< "critical_path"
  std::string (*text)(const SimViewInput&);
  nlohmann::ordered_json (*json)(const SimViewInput&);
  bool text_needs_timeline;
  bool json_needs_timeline;
  /// Its size grows with the actions (a critical path, a memory timeline): left out of the
  /// default JSON document, which stays a few KB at any length; named in --views, it comes.
  bool per_action;
  /// Where the view goes in the JSON document. The text report follows the table's order, which
  /// ends with the critical path (up to 40 lines); the JSON document ends with the memory view,
  /// whose step functions are its long part.
  std::uint8_t json_position;
  /// In no default report, text or JSON: only where --views names it.
  bool on_request = false;
};

/// Every view, in the text report's order: summary, bubbles, memory, critical-path,
/// memory-timeline, stage-costs.
std::span<const SimView> sim_views();
/// Their names, in the same order (simulate's --views choices).
std::vector<std::string> sim_view_names();
/// The views a report has when --views is not given: for text, all but the memory timeline; for
/// JSON, those that are not per action; neither has those on request only.
std::vector<std::string> default_sim_views(bool json);

}  // namespace ppsched
