#include "sim/sim_inputs.hpp"

#include "model/recompute.hpp"

namespace ppsched {

void apply_stage_spec(SimInputs& in, const std::vector<StageSpec>& spec,
                      const std::vector<std::uint32_t>& stage_to_rank, std::uint32_t ranks) {
  in.sim.comm.stages = spec;
  in.memory = MemoryModel::from_stage_spec(spec, stage_to_rank, ranks);
  in.sim.costs = with_recompute(in.sim.costs, spec);
}

SimInputs sim_inputs_from_stages(const StageModel& stages, const std::vector<std::uint32_t>& stage_to_rank,
                                 std::uint32_t ranks) {
  SimInputs in;
  in.sim.costs = stages.costs;
  apply_stage_spec(in, stages.spec, stage_to_rank, ranks);
  return in;
}

}  // namespace ppsched
