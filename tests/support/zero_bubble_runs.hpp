// The measured runs of the Zero Bubble paper (arXiv 2401.10241, ICLR 2024: Megatron-LM on A100 SXM
// 80GB, 8 per node, RoCE between nodes, sequence length 1024, bf16) that the megatron runtime
// model is calibrated on, and the prediction ppsched makes of each, set up as a user would: the
// profiled costs in microseconds, T_comm as the link latency, NVLink (300 GB/s) inside a node and
// 25 GB/s between nodes, s x b x hidden x 2 bytes per message, --runtime megatron. ZB-1p and ZB-2p
// are the automatic schedule at caps of p and 2p activations (M_W / M_B as profiled) under the
// post-validated optimizer; 1F1B and 1F1B-I (one layer per chunk: (layers + 2) / p chunks) under
// the synchronous one.
//
// One home for the table: the calibration test (tests/unit/sim/megatron_calibration_test.cpp) and
// the bench that prints it (bench/calibration_bench.cpp) both read it from here.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "auto/auto_schedule.hpp"
#include "model/runtime_params.hpp"
#include "sim/runtime.hpp"
#include "sim/sim_inputs.hpp"
#include "synth/synth.hpp"

namespace ppsched::zb_runs {

struct Run {
  std::string_view model;
  std::uint32_t p, b, layers, hidden, m;
  double t_f, t_b, t_w, t_comm;  ///< ms; t_b is the input gradient (ppsched's I)
  double zb2p, zb1p, f1b, f1bi;  ///< measured samples per GPU per second
  double mw_over_mb;
};

inline constexpr std::array<Run, 6> kRuns{{
    {"1.5B", 8, 6, 22, 2304, 24, 18.522, 18.086, 9.337, 0.601, 14.5, 12.9, 11.8, 13.1, 0.366},
    {"1.5B", 8, 6, 22, 2304, 32, 18.513, 18.086, 9.331, 0.626, 14.8, 13.4, 12.5, 13.4, 0.366},
    {"1.5B", 8, 6, 22, 2304, 64, 18.546, 18.097, 9.321, 0.762, 14.9, 14.2, 13.6, 13.9, 0.366},
    {"14.6B", 16, 1, 46, 5120, 48, 11.347, 11.248, 8.132, 0.377, 1.81, 1.61, 1.40, 1.54, 0.432},
    {"14.6B", 16, 1, 46, 5120, 64, 11.307, 11.254, 8.101, 0.379, 1.83, 1.67, 1.49, 1.59, 0.432},
    {"14.6B", 16, 1, 46, 5120, 128, 11.325, 11.308, 8.109, 0.378, 1.85, 1.76, 1.64, 1.66, 0.432},
}};

enum class Sched { ZB2p, ZB1p, OneFOneB, Interleaved };
inline constexpr std::array<Sched, 4> kScheds{Sched::ZB2p, Sched::ZB1p, Sched::OneFOneB, Sched::Interleaved};

inline std::string_view name(Sched s) {
  switch (s) {
    case Sched::ZB2p:
      return "ZB-2p";
    case Sched::ZB1p:
      return "ZB-1p";
    case Sched::OneFOneB:
      return "1F1B";
    case Sched::Interleaved:
      return "1F1B-I";
  }
  return "";
}

/// The measured iteration time in microseconds: m x b / (throughput x p).
inline double measured_us(const Run& r, Sched s) {
  const double thr = s == Sched::ZB2p ? r.zb2p : s == Sched::ZB1p ? r.zb1p : s == Sched::OneFOneB ? r.f1b : r.f1bi;
  return double(r.m) * r.b / (thr * r.p) * 1e6;
}

inline std::uint32_t stages_per_rank(const Run& r, Sched s) {
  return s == Sched::Interleaved ? (r.layers + 2) / r.p : 1;
}

/// The simulator's inputs for `r` with `v` stages per rank in loop placement.
inline SimInputs inputs(const Run& r, std::uint32_t v) {
  const std::uint32_t stages = r.p * v;
  SimInputs in;
  KindCosts per_rank{};
  per_rank[static_cast<std::size_t>(ActionKind::F)] = r.t_f * 1000;
  per_rank[static_cast<std::size_t>(ActionKind::I)] = r.t_b * 1000;
  per_rank[static_cast<std::size_t>(ActionKind::W)] = r.t_w * 1000;
  per_rank[static_cast<std::size_t>(ActionKind::B)] = (r.t_b + r.t_w) * 1000;
  in.sim.costs = CostModel::uniform(stages, v, per_rank);
  Topology topo;
  for (std::uint32_t rank = 0; rank < r.p; ++rank) {
    topo.node_of_rank.push_back(rank / 8);
    topo.slice_of_rank.push_back(0);
  }
  const double latency = r.t_comm * 1000;
  topo.intra_node = {latency, 300e3};  // bytes per microsecond: 300 GB/s
  topo.inter_node = {latency, 25e3};
  topo.inter_slice = topo.inter_node;
  in.sim.comm.topology = topo;
  const double message = 1024.0 * r.b * r.hidden * 2;
  StageSpec spec;
  spec.activation_bytes = spec.gradient_bytes = message;
  spec.activation_memory_bytes = 1.0 / v;  // M_B, in units of one rank's activation
  spec.weight_grad_memory_bytes = r.mw_over_mb / v;
  in.sim.comm.stages.assign(stages, spec);
  std::vector<std::uint32_t> stage_to_rank(stages);
  for (std::uint32_t st = 0; st < stages; ++st) stage_to_rank[st] = st % r.p;
  in.memory = MemoryModel::from_stage_spec(in.sim.comm.stages, stage_to_rank, r.p);
  return in;
}

/// The schedule ppsched runs for `s` on `r` (ZB-1p and ZB-2p: the automatic search at its cap).
inline Schedule schedule(const Run& r, Sched s, const SimInputs& in) {
  if (s == Sched::OneFOneB) return synthesize("1F1B", {r.p, r.m});
  if (s == Sched::Interleaved) return synthesize("Interleaved1F1B", {r.p, r.m, stages_per_rank(r, s)});
  AutoParams a;
  a.ranks = r.p;
  a.microbatches = r.m;
  a.memory_cap = s == Sched::ZB2p ? 2.0 * r.p : 1.0 * r.p;
  a.sim = in.sim;
  a.memory = in.memory;
  a.optimizer = Optimizer::PostValidated;  // what the paper's runtime pays: the longest rank span
  return auto_schedule(a).schedule;
}

inline Optimizer optimizer(Sched s) {
  return s == Sched::ZB2p || s == Sched::ZB1p ? Optimizer::PostValidated : Optimizer::Sync;
}

/// ppsched's predicted iteration time in microseconds under --runtime megatron with `params`, of
/// `sched` (schedule(r, s, in)) on the inputs `in` (inputs(r, stages_per_rank(r, s))).
inline double predicted_us(Sched s, const Schedule& sched, const SimInputs& in, const RuntimeParams& params) {
  const RuntimeModel model{Runtime::Megatron, optimizer(s), params};
  const SimAnalysis a = simulate_runtime(sched, sched.placement.stage_to_rank, in.sim, in.memory, model);
  return iteration_time(a, model.optimizer);
}

/// The same, building the inputs and the schedule.
inline double predicted_us(const Run& r, Sched s, const RuntimeParams& params = megatron_a100_params()) {
  const SimInputs in = inputs(r, stages_per_rank(r, s));
  return predicted_us(s, schedule(r, s, in), in, params);
}

}  // namespace ppsched::zb_runs
