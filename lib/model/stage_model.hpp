// From a NetworkModel and a Partition to what the simulator takes: per-stage costs (CostModel)
// and per-stage bytes (StageSpec), for one microbatch size.
#pragma once

#include <cstdint>
#include <vector>

#include "model/comm.hpp"
#include "model/costs.hpp"
#include "model/gpu.hpp"
#include "model/network.hpp"
#include "model/partition.hpp"

namespace ppsched {

/// Per stage, the sums of its layers' LayerCosts:
///   costs.per_stage[s]: F, I, W in microseconds, B = I + W, every other kind 0;
///   spec[s].activation_bytes: the output sent to stage s + 1 (0 for the last stage, which ends
///     with the head; an empty stage passes on what it receives);
///   spec[s].gradient_bytes: the gradient of its input, sent back to stage s - 1 (its input's
///     size; 0 for stage 0, whose input is token ids);
///   spec[s].activation_memory_bytes: sum of M_B; spec[s].weight_grad_memory_bytes: sum of M_W;
///   spec[s].weight_bytes: all static bytes, parameters + gradients + optimizer state (the
///     StageSpec name says weights; here it means everything held for the whole step).
struct StageModel {
  CostModel costs;
  std::vector<StageSpec> spec;
  std::vector<double> params;         ///< per stage, the parameters one GPU holds (for data-parallel sharding)
  std::vector<double> expert_params;  ///< of them, the routed experts' (their own data-parallel group)
};

/// Throws ModelError when a layer cannot be costed (layer_cost) or `p` does not hold every layer
/// of `m` exactly once, in order.
/// With `split`, each stage as one GPU of its tensor- and expert-parallel groups holds and runs it.
StageModel derive_stages(const NetworkModel& m, const Partition& p, const GpuSpec* gpu, std::uint32_t microbatch_size,
                         const LayerParallelism& split = {});

}  // namespace ppsched
