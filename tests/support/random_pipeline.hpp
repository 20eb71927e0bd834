// A random pipeline for the automatic search's tests: p ranks, m microbatches, v chunks per rank,
// every stage's F, I, W and B costs drawn from [0.25, 4), ranks in pairs on nodes with a random
// transfer latency between nodes, M_W = M_B / 2, no cap.
#pragma once

#include <cstdint>
#include <random>

#include "auto/auto_schedule.hpp"

namespace ppsched::test {

inline AutoParams random_pipeline(std::mt19937& rng, std::uint32_t p, std::uint32_t m, std::uint32_t v) {
  std::uniform_real_distribution<double> cost(0.25, 4.0);
  AutoParams a;
  a.ranks = p;
  a.microbatches = m;
  a.stages_per_rank = v;
  a.sim.costs = CostModel::uniform(p * v, v, unit_costs());
  for (auto& stage : a.sim.costs.per_stage)
    for (ActionKind k : {ActionKind::F, ActionKind::I, ActionKind::W, ActionKind::B})
      stage[static_cast<std::size_t>(k)] = cost(rng);
  Topology topo;
  for (std::uint32_t r = 0; r < p; ++r) {
    topo.node_of_rank.push_back(r / 2);
    topo.slice_of_rank.push_back(0);
  }
  topo.inter_node.latency_us = cost(rng);
  a.sim.comm.topology = topo;
  for (std::uint32_t s = 0; s < p * v; ++s) {
    a.memory.activation.push_back(1.0 / v);
    a.memory.weight_grad.push_back(0.5 / v);
  }
  return a;
}

}  // namespace ppsched::test
