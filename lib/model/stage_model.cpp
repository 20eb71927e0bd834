#include "model/stage_model.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace ppsched {

StageModel derive_stages(const NetworkModel& m, const Partition& p, const GpuSpec* gpu, std::uint32_t microbatch_size,
                         const LayerParallelism& split) {
  check_network(m);
  // A partition made by hand (or by a caller's own code) must still be the model, in order.
  std::size_t next = 0;
  for (std::size_t s = 0; s < p.layers_of_stage.size(); ++s)
    for (std::uint32_t layer : p.layers_of_stage[s]) {
      if (layer != next)
        throw ModelError("stage " + std::to_string(s) + " holds layer " + std::to_string(layer) + " where layer " +
                         std::to_string(next) + " comes next: stages must hold every layer once, in order");
      ++next;
    }
  if (next != m.layers.size())
    throw ModelError("the stages hold " + std::to_string(next) + " of the model's " + std::to_string(m.layers.size()) +
                     " layers");

  const auto stages = static_cast<std::uint32_t>(p.layers_of_stage.size());
  StageModel out;
  out.costs.per_stage.assign(stages, KindCosts{});
  out.spec.resize(stages);
  out.params.assign(stages, 0.0);
  out.expert_params.assign(stages, 0.0);
  LayerCostMemo cost_of(m, gpu, microbatch_size, split);
  double incoming = 0;  // bytes entering the stage: token ids count as nothing
  for (std::uint32_t s = 0; s < stages; ++s) {
    KindCosts& k = out.costs.per_stage[s];
    StageSpec& spec = out.spec[s];
    double outgoing = incoming;
    spec.weight_grad_memory_bytes = 0;  // StageSpec's -1 means "equal to M_B"; here M_W is stated
    double recompute_us = 0, group_weighted_us = 0, kept_bytes = 0, held_for_weight = 0;
    for (std::uint32_t layer : p.layers_of_stage[s]) {
      const LayerCost c = cost_of(m.layers[layer]);
      out.params[s] += c.params;
      out.expert_params[s] += c.expert_params;
      k[static_cast<std::size_t>(ActionKind::F)] += c.f_us;
      k[static_cast<std::size_t>(ActionKind::I)] += c.i_us;
      k[static_cast<std::size_t>(ActionKind::W)] += c.w_us;
      recompute_us += c.recompute_us;
      group_weighted_us += c.recompute_us * c.weight_groups;
      kept_bytes += c.activation_bytes;
      // After I, a checkpointed layer holds its inputs (for W's recompute) and what W reads.
      held_for_weight += c.weight_grad_bytes + (c.checkpointed ? c.activation_bytes : 0.0);
      spec.activation_memory_bytes += c.all_activation_bytes;
      spec.weight_grad_memory_bytes += c.weight_grad_bytes;
      spec.weight_bytes += c.static_bytes;
      outgoing = c.output_bytes;
    }
    k[static_cast<std::size_t>(ActionKind::B)] =
        k[static_cast<std::size_t>(ActionKind::I)] + k[static_cast<std::size_t>(ActionKind::W)];
    // Checkpointed blocks: their re-runs as a share of the stage's forward, and W's re-runs per
    // parameter group (a stage of mixed blocks gets their time-weighted mean).
    if (m.recompute != Recompute::Mode::None) {
      Recompute& r = spec.recompute;
      r.mode = m.recompute;
      const double f = k[static_cast<std::size_t>(ActionKind::F)];
      r.cost = f > 0 ? std::min(1.0, recompute_us / f) : 0.0;
      r.kept_memory_bytes = kept_bytes;
      r.held_for_weight_bytes = held_for_weight;
      r.weight_groups =
          recompute_us > 0 ? static_cast<std::uint32_t>(std::lround(group_weighted_us / recompute_us)) : 1;
    }
    spec.activation_bytes = outgoing;
    spec.gradient_bytes = s == 0 ? 0.0 : incoming;
    incoming = outgoing;
  }
  return out;
}

}  // namespace ppsched
