// Speed of the automatic schedule search (lib/auto), against the Zero Bubble authors'
// Python search (sail-sg/zero-bubble-pipeline-parallelism: 2 s for 64 stages x 512
// microbatches, 42 s for 256 x 2048, as issue 9 states).
//
//   BM_GreedyOnce   one greedy variant (the list scheduler alone, no re-simulation)
//   BM_AutoSearch   the whole search as `--schedule auto` runs it, with the default time budget
//                   (1 s of work, counted in actions): the families and greedy variants in the
//                   order of the rounds table (lib/auto/rounds.cpp); it stops at the first
//                   candidate that reaches the makespan lower bound
//   BM_AutoSearchUneven  the same with T_F=2, T_I=3, T_W=1 (per rank), where the bound is out of
//                   reach and every candidate runs
//   BM_AutoSearchSmall  small sizes with the Zero Bubble paper's measured costs (1.5B: T_F=18.522,
//                   T_I=18.086, T_W=9.337 ms with its T_comm of 0.601 ms between ranks; 14.6B:
//                   11.347, 11.248, 8.132, no comm), under either objective (0 sync, 1
//                   post-validated): the slowest searches of a 860-configuration scan with
//                   p x m <= 1024 (docs/bench.md, "Small sizes"), where the local search runs
//   BM_AutoSearchTight  V below cap p with the same costs (a cap of `cap` microbatches), where the
//                   unit-time orders and the building blocks run (docs/bench.md, "Tight caps")
//
// Unit costs (F = I = W = 1), no comm, M_W = M_B / 2, cap p (one chunk per rank).
// Counters: actions (in the schedule built), candidates (how many the search measured).
#include <benchmark/benchmark.h>

#include "auto/auto_schedule.hpp"
#include "auto/greedy.hpp"

namespace {

using namespace ppsched;
using auto_detail::greedy_schedule;
using auto_detail::GreedyPolicy;

AutoParams params(std::uint32_t p, std::uint32_t m, std::uint32_t v, bool uneven = false) {
  AutoParams a;
  a.ranks = p;
  a.microbatches = m;
  a.stages_per_rank = v;
  a.memory_cap = p;
  KindCosts costs = unit_costs();
  if (uneven) {
    costs[static_cast<std::size_t>(ActionKind::F)] = 2;
    costs[static_cast<std::size_t>(ActionKind::I)] = 3;
    costs[static_cast<std::size_t>(ActionKind::W)] = 1;
    costs[static_cast<std::size_t>(ActionKind::B)] = 4;
  }
  a.sim.costs = CostModel::uniform(p * v, v, costs);
  for (std::uint32_t s = 0; s < p * v; ++s) {
    a.memory.activation.push_back(1.0 / v);
    a.memory.weight_grad.push_back(0.5 / v);
  }
  return a;  // the default --time-budget (1 s of work), as `--schedule auto` runs it
}

void BM_GreedyOnce(benchmark::State& state) {
  const auto p = static_cast<std::uint32_t>(state.range(0));
  const auto m = static_cast<std::uint32_t>(state.range(1));
  const auto v = static_cast<std::uint32_t>(state.range(2));
  AutoParams a = params(p, m, v);
  GreedyPolicy pol{double(p), false, true};
  Schedule s;
  double makespan = 0;
  for (auto _ : state) {
    bool ok = greedy_schedule(a, pol, s, makespan);
    benchmark::DoNotOptimize(ok);
  }
  state.counters["actions"] = static_cast<double>(s.action_count());
  state.counters["makespan"] = makespan;
}

void search(benchmark::State& state, bool uneven) {
  const auto p = static_cast<std::uint32_t>(state.range(0));
  const auto m = static_cast<std::uint32_t>(state.range(1));
  const auto v = static_cast<std::uint32_t>(state.range(2));
  AutoParams a = params(p, m, v, uneven);
  AutoResult r;
  for (auto _ : state) {
    r = auto_schedule(a);
    // Not DoNotOptimize(r.best.makespan): GCC may pick the "r" alternative of its "+m,r"
    // constraint for a double and write garbage back (seen here with benchmark 1.7.1).
    benchmark::DoNotOptimize(r.schedule.ranks.data());
  }
  state.counters["actions"] = static_cast<double>(r.schedule.action_count());
  state.counters["candidates"] = static_cast<double>(r.tried.size());
  state.counters["makespan"] = r.best.makespan;
}

// The paper's measured costs (model 15: 1.5B with its T_comm; 146: 14.6B, no comm) under either
// objective.
AutoParams paper_params(std::uint32_t p, std::uint32_t m, std::uint32_t v, bool paper_1_5b, bool post_validated) {
  AutoParams a = params(p, m, v);
  KindCosts costs = unit_costs();
  costs[static_cast<std::size_t>(ActionKind::F)] = paper_1_5b ? 18.522 : 11.347;
  costs[static_cast<std::size_t>(ActionKind::I)] = paper_1_5b ? 18.086 : 11.248;
  costs[static_cast<std::size_t>(ActionKind::W)] = paper_1_5b ? 9.337 : 8.132;
  costs[static_cast<std::size_t>(ActionKind::B)] =
      costs[static_cast<std::size_t>(ActionKind::I)] + costs[static_cast<std::size_t>(ActionKind::W)];
  a.sim.costs = CostModel::uniform(p * v, v, costs);
  if (paper_1_5b) {
    Topology one_node;
    one_node.node_of_rank.assign(p, 0);
    one_node.slice_of_rank.assign(p, 0);
    one_node.intra_node.latency_us = 0.601;
    a.sim.comm.topology = one_node;
  }
  a.optimizer = post_validated ? Optimizer::PostValidated : Optimizer::Sync;
  return a;
}

void run_search(benchmark::State& state, const AutoParams& a) {
  AutoResult r;
  for (auto _ : state) {
    r = auto_schedule(a);
    benchmark::DoNotOptimize(r.schedule.ranks.data());
  }
  state.counters["actions"] = static_cast<double>(r.schedule.action_count());
  state.counters["iteration"] = iteration_time(r.best, a.optimizer);
}

void BM_AutoSearchSmall(benchmark::State& state) {
  run_search(state,
             paper_params(static_cast<std::uint32_t>(state.range(0)), static_cast<std::uint32_t>(state.range(1)),
                          static_cast<std::uint32_t>(state.range(2)), state.range(3) == 15, state.range(4) == 1));
}

// V below cap p (`cap` microbatches), where the unit-time orders and the building blocks run.
void BM_AutoSearchTight(benchmark::State& state) {
  AutoParams a = paper_params(static_cast<std::uint32_t>(state.range(0)), static_cast<std::uint32_t>(state.range(1)), 2,
                              state.range(2) == 15, state.range(3) == 1);
  a.memory_cap = static_cast<double>(state.range(4));
  run_search(state, a);
}

void BM_AutoSearch(benchmark::State& state) { search(state, false); }
void BM_AutoSearchUneven(benchmark::State& state) { search(state, true); }

BENCHMARK(BM_GreedyOnce)
    ->ArgNames({"p", "m", "v"})
    ->Args({64, 512, 1})
    ->Args({64, 512, 2})
    ->Args({256, 2048, 1})
    ->Args({256, 2048, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_AutoSearch)
    ->ArgNames({"p", "m", "v"})
    ->Args({64, 512, 1})
    ->Args({64, 512, 2})
    ->Args({256, 2048, 1})
    ->Args({256, 2048, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);
BENCHMARK(BM_AutoSearchUneven)
    ->ArgNames({"p", "m", "v"})
    ->Args({64, 512, 1})
    ->Args({32, 512, 2})
    ->Args({64, 512, 2})
    ->Args({256, 2048, 1})
    ->Args({128, 2048, 2})
    ->Args({256, 2048, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(2);

}  // namespace

BENCHMARK(BM_AutoSearchSmall)
    ->ArgNames({"p", "m", "v", "model", "pv"})
    ->Args({16, 16, 1, 15, 0})
    ->Args({16, 16, 1, 146, 1})
    ->Args({16, 17, 1, 15, 1})
    ->Args({12, 24, 1, 15, 0})
    ->Args({8, 16, 2, 15, 1})
    ->Args({12, 12, 2, 146, 0})
    ->Args({12, 12, 2, 146, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK(BM_AutoSearchTight)
    ->ArgNames({"p", "m", "model", "pv", "cap"})
    ->Args({6, 12, 15, 1, 3})
    ->Args({8, 8, 15, 1, 5})
    ->Args({8, 16, 146, 0, 4})
    ->Args({16, 48, 146, 1, 9})
    ->Args({32, 32, 15, 1, 17})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK_MAIN();
