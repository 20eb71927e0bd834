// The automatic search's test parameters and checks, shared by the tests of lib/auto: unit and
// per-rank costs, random small pipelines, the review grid's model, an independent re-measure of a
// schedule by the timed simulator, and the validator's verdict.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "auto/auto_schedule.hpp"
#include "check/check.hpp"
#include "sim/memory.hpp"
#include "sim/timed.hpp"
#include "support/catch.hpp"

namespace ppsched::test {

// Unit costs per rank (F = I = W = 1, a V chunk costs half), no comm, M_W = M_B / 2.
inline AutoParams unit_params(std::uint32_t p, std::uint32_t m, std::uint32_t v, double cap) {
  AutoParams a;
  a.ranks = p;
  a.microbatches = m;
  a.stages_per_rank = v;
  a.memory_cap = cap;
  a.sim.costs = CostModel::uniform(p * v, v, unit_costs());
  for (std::uint32_t s = 0; s < p * v; ++s) {
    a.memory.activation.push_back(1.0 / v);
    a.memory.weight_grad.push_back(0.5 / v);
  }
  return a;
}

// `v` chunks per rank with per-rank costs T_F, T_I, T_W (a V chunk costs half), no comm,
// M_W = M_B / 2.
inline AutoParams costed_params(std::uint32_t p, std::uint32_t m, std::uint32_t v, double cap, double t_f, double t_i,
                                double t_w) {
  AutoParams a = unit_params(p, m, v, cap);
  KindCosts costs = unit_costs();
  costs[static_cast<std::size_t>(ActionKind::F)] = t_f;
  costs[static_cast<std::size_t>(ActionKind::I)] = t_i;
  costs[static_cast<std::size_t>(ActionKind::W)] = t_w;
  costs[static_cast<std::size_t>(ActionKind::B)] = t_i + t_w;
  a.sim.costs = CostModel::uniform(p * v, v, costs);
  return a;
}

// Two chunks per rank (V), as costed_params.
inline AutoParams v_params(std::uint32_t p, std::uint32_t m, double cap, double t_f, double t_i, double t_w) {
  return costed_params(p, m, 2, cap, t_f, t_i, t_w);
}

// Independent of the search: simulate its schedule again and measure what it reports.
struct Measured {
  double makespan, peak, longest_rank_span;
};
inline Measured remeasure(const Schedule& s, const AutoParams& a) {
  Timeline t = simulate_timed(s, s.placement.stage_to_rank, a.sim);
  Measured out{t.makespan, compute_memory(s, t, a.memory).max_peak(), 0};
  for (std::size_t r = 0; r < t.rank_count(); ++r) {
    double first = 1e300, last = 0;
    for (std::uint32_t e = t.rank_begin[r]; e < t.rank_begin[r + 1]; ++e) {
      first = std::min(first, t.start[e]);
      last = std::max(last, t.end[e]);
    }
    out.longest_rank_span = std::max(out.longest_rank_span, last - first);
  }
  return out;
}

inline std::size_t validation_errors(const Schedule& s) {
  CheckContext ctx;
  ctx.schedule = &s;
  ctx.file = "auto";
  ctx.ranks = static_cast<std::uint32_t>(s.rank_count());
  ctx.stages = s.num_stages;
  ctx.microbatches = s.num_microbatches;
  ctx.stage_to_rank = s.placement.stage_to_rank;
  ctx.placement_inferred = false;
  DiagnosticSink sink;
  run_checks(ctx, sink);
  std::size_t errors = 0;
  for (const auto& d : sink.diagnostics()) {
    INFO(d.rule << ": " << d.message);
    CHECK(d.severity != Severity::Error);
    errors += d.severity == Severity::Error;
  }
  return errors;
}

// Ranks in pairs on nodes: a transfer between nodes takes `latency` (microseconds).
inline Topology pairs_on_nodes(std::uint32_t ranks, double latency) {
  Topology topo;
  for (std::uint32_t r = 0; r < ranks; ++r) {
    topo.node_of_rank.push_back(r / 2);
    topo.slice_of_rank.push_back(0);
  }
  topo.inter_node.latency_us = latency;
  return topo;
}

// A random small pipeline with no cap: p 2..8, m 1..3p, one or two chunks, and F, I and W costs
// drawn per stage from [0.25, 4), so chunks and ranks differ.
inline AutoParams random_small_pipeline(std::mt19937& rng) {
  std::uniform_real_distribution<double> cost(0.25, 4.0);
  const std::uint32_t p = 2 + rng() % 7, m = 1 + rng() % (3 * p), v = 1 + rng() % 2;
  AutoParams a = unit_params(p, m, v, 0);
  for (auto& stage : a.sim.costs.per_stage) {
    stage[static_cast<std::size_t>(ActionKind::F)] = cost(rng);
    stage[static_cast<std::size_t>(ActionKind::I)] = cost(rng);
    stage[static_cast<std::size_t>(ActionKind::W)] = cost(rng);
  }
  return a;
}

// bench/offline/zb_compare.py's model for a V configuration of its review grid: per-rank costs, a
// latency `comm` on every transfer between ranks, M_W = m_w M_B, a cap of `cap` microbatches.
inline AutoParams grid_params(std::uint32_t p, std::uint32_t m, double cap, double t_f, double t_i, double t_w,
                              double comm, double m_w) {
  AutoParams a = v_params(p, m, cap, t_f, t_i, t_w);
  if (comm > 0) {
    a.sim.comm.topology = pairs_on_nodes(p, comm);
    a.sim.comm.topology->intra_node.latency_us = comm;
  }
  for (std::uint32_t s = 0; s < 2 * p; ++s) a.memory.weight_grad[s] = m_w / 2;
  return a;
}

// A V schedule (two stages per rank) of these per-rank programs.
inline Schedule v_schedule(const std::vector<std::vector<Action>>& programs, std::uint32_t microbatches) {
  const auto p = static_cast<std::uint32_t>(programs.size());
  Schedule s;
  s.ranks.resize(p);
  s.num_stages = 2 * p;
  s.num_microbatches = microbatches;
  s.placement = Placement::for_shape(PlacementStyle::V, p, 2);
  for (std::uint32_t r = 0; r < p; ++r) s.ranks[r].actions = programs[r];
  return s;
}

}  // namespace ppsched::test
