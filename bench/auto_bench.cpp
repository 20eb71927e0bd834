// Speed of the automatic schedule search (lib/synth/auto), against the Zero Bubble authors'
// Python search (sail-sg/zero-bubble-pipeline-parallelism: 2 s for 64 stages x 512
// microbatches, 42 s for 256 x 2048, as issue 9 states).
//
//   BM_GreedyOnce   one greedy variant (the list scheduler alone, no re-simulation)
//   BM_AutoSearch   the whole search as `--schedule auto` runs it: the handcrafted families
//                   simulated, then greedy variants until the time budget (here 0.2 s) is spent
//
// Unit costs (F = I = W = 1), no comm, M_W = M_B / 2, cap p (one chunk per rank).
// Counters: actions (in the schedule built), candidates (how many the search measured).
#include <benchmark/benchmark.h>

#include "synth/auto/auto_schedule.hpp"

namespace {

using namespace ppsched;

AutoParams params(std::uint32_t p, std::uint32_t m, std::uint32_t v) {
  AutoParams a;
  a.ranks = p;
  a.microbatches = m;
  a.stages_per_rank = v;
  a.memory_cap = p;
  a.sim.costs = CostModel::uniform(p * v, v, unit_costs());
  for (std::uint32_t s = 0; s < p * v; ++s) {
    a.memory.activation.push_back(1.0 / v);
    a.memory.weight_grad.push_back(0.5 / v);
  }
  a.time_budget_s = 0.2;
  return a;
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

void BM_AutoSearch(benchmark::State& state) {
  const auto p = static_cast<std::uint32_t>(state.range(0));
  const auto m = static_cast<std::uint32_t>(state.range(1));
  const auto v = static_cast<std::uint32_t>(state.range(2));
  AutoParams a = params(p, m, v);
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

BENCHMARK(BM_GreedyOnce)->ArgNames({"p", "m", "v"})->Args({64, 512, 1})->Args({64, 512, 2})->Args({256, 2048, 1})->Args({256, 2048, 2})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AutoSearch)->ArgNames({"p", "m", "v"})->Args({64, 512, 1})->Args({64, 512, 2})->Args({256, 2048, 1})->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
