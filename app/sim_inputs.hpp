// What the timed simulator needs besides the schedule: costs, topology, stage spec and the memory
// model they imply. Shared by simulate, compile/simulate --schedule auto and tune, so the flags
// mean the same everywhere.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/sim_inputs.hpp"

namespace CLI {
class App;
}

namespace ppsched::cli {

struct SimInputOptions {
  std::string cost;   ///< shorthand, per rank
  std::string costs;  ///< cost table file
  /// What a (stage, kind) the cost table leaves out costs: "none" (an error) or "unit" (the
  /// shorthand's value, unit costs by default, with a warning).
  std::string fill = "none";
  double overlap_factor = 1.0;
  std::string stage_spec, topology;
  bool blocking_comms = false;
};

/// Adds --cost, --costs, --fill, --overlap-factor, --stage-spec, --topology and --blocking-comms.
void add_sim_input_options(CLI::App& sub, SimInputOptions& opt);

/// Reads every input for a pipeline of `ranks` ranks and `stage_to_rank.size()` stages; prints
/// each problem and returns nullopt on any. A cost table must price every compute kind that
/// `schedule` runs on each stage, or, when the schedule is not known yet (tune, the automatic
/// search: null), every compute kind on every stage; --fill unit turns a gap into a warning.
std::optional<SimInputs> load_sim_inputs(const SimInputOptions& opt, std::uint32_t ranks,
                                         const std::vector<std::uint32_t>& stage_to_rank,
                                         const Schedule* schedule = nullptr);

/// "F=1,I=1,W=1,B=2 (unit)" or the shorthand given, for reports.
std::string cost_description(const SimInputOptions& opt);

}  // namespace ppsched::cli
