// What the timed simulator needs besides the schedule: its options (costs, comm model) and the
// memory model. Built by the commands from flags and files (app/sim_inputs.cpp), and by the tune
// engine per placement; consumed by simulate_timed/simulate_aggregates and the automatic search.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/cost_coverage.hpp"
#include "model/stage_model.hpp"
#include "sim/memory.hpp"
#include "sim/timed.hpp"

namespace ppsched {

struct SimInputs {
  TimedOptions sim;
  MemoryModel memory;
  /// Per stage, the model's layers it holds ("embedding + 3 blocks"), when a model file gave the
  /// costs (stage_layers_label); empty otherwise. For the stage-costs view.
  std::vector<std::string> stage_layers;
  /// Where a cost table times only some compute kinds (a run with a fused backward times F and B,
  /// not I and W): what it times. A schedule that runs anything else cannot be priced from it;
  /// tune says so of that trial (unset: the costs price every kind).
  std::optional<CostCoverage> priced;
};

/// The inputs a model's stages give a pipeline whose stages sit on ranks as `stage_to_rank` says:
/// their costs, the bytes their transfers carry (for a topology to price), and memory in bytes:
/// on each rank the static bytes (weights, gradients, optimizer state) of its stages plus live
/// activations. The one place a derived StageModel becomes simulator inputs.
/// What a stage spec adds to `in`: the bytes each transfer carries, the memory model in bytes,
/// and the recompute each checkpointed stage's backward costs. The one place a stage spec
/// becomes simulator inputs (from a file or derived from a model).
void apply_stage_spec(SimInputs& in, const std::vector<StageSpec>& spec,
                      const std::vector<std::uint32_t>& stage_to_rank, std::uint32_t ranks);

SimInputs sim_inputs_from_stages(const StageModel& stages, const std::vector<std::uint32_t>& stage_to_rank,
                                 std::uint32_t ranks);

}  // namespace ppsched
