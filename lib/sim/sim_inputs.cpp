#include "sim/sim_inputs.hpp"

namespace ppsched {

SimInputs sim_inputs_from_stages(const StageModel& stages, const std::vector<std::uint32_t>& stage_to_rank,
                                 std::uint32_t ranks) {
  SimInputs in;
  in.sim.costs = stages.costs;
  in.sim.comm.stages = stages.spec;
  in.memory = MemoryModel::from_stage_spec(stages.spec, stage_to_rank, ranks);
  return in;
}

}  // namespace ppsched
