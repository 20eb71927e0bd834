// What the timed simulator needs besides the schedule: costs, topology, stage spec and the memory
// model they imply. Shared by simulate, compile/simulate --schedule auto and tune, so the flags
// mean the same everywhere.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/runtime.hpp"
#include "sim/sim_inputs.hpp"

namespace CLI {
class App;
}

namespace ppsched::cli {

struct SimInputOptions {
  std::string cost;   ///< shorthand, per rank
  std::string costs;  ///< cost table file
  double overlap_factor = 1.0;
  std::string stage_spec, topology;
  bool blocking_comms = false;
  std::string runtime = "pytorch";  ///< sim/runtime.hpp; only simulate and tune offer --runtime

  Runtime runtime_model() const { return *runtime_from_name(runtime); }
};

/// Adds --cost, --costs, --overlap-factor, --stage-spec, --topology and --blocking-comms.
void add_sim_input_options(CLI::App& sub, SimInputOptions& opt);

/// Adds --runtime: which runtime's execution the numbers describe (simulate and tune).
void add_runtime_option(CLI::App& sub, SimInputOptions& opt);

/// "pytorch runtime (...)": the time model of a report, for its header or summary.
std::string time_model_description(const SimInputOptions& opt);

/// Reads every input for a pipeline of `ranks` ranks and `stage_to_rank.size()` stages; prints
/// each problem and returns nullopt on any.
std::optional<SimInputs> load_sim_inputs(const SimInputOptions& opt, std::uint32_t ranks,
                                         const std::vector<std::uint32_t>& stage_to_rank);

/// "F=1,I=1,W=1,B=2 (unit)" or the shorthand given, for reports.
std::string cost_description(const SimInputOptions& opt);

}  // namespace ppsched::cli
