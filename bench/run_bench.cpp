// Host-side cost of `ppsched run` (lib/run): how fast a schedule becomes a checked launch plan,
// and how fast the engine enqueues it. On a GPU the host must enqueue an iteration well ahead of
// the device; a GEMM launch takes tens of µs or more, so the engine's own cost per launch must be
// far below that (CUDA's own API cost, a few µs per call, comes on top and is not measured here).
//
//   BM_BuildRunPlan   build_run_plan + check_host_order for 1F1B lowered with send/recv
//   BM_FakeIteration  one timed iteration of measure() on the fake device: the engine's enqueue
//                     loop plus the fake device's bookkeeping per launch (an upper bound on the
//                     engine's share)
// Counters: launches (per iteration), launches/s.
#include <benchmark/benchmark.h>

#include "passes/passes.hpp"
#include "run/engine.hpp"
#include "run/fake_device.hpp"
#include "run/plan.hpp"
#include "synth/synth.hpp"

namespace {

using namespace ppsched;
using namespace ppsched::run;

struct Setup {
  Schedule s;
  PlanOptions opt;
};

Setup make(std::uint32_t p, std::uint32_t m) {
  Setup x;
  x.s = lower_send_recv(synthesize("1F1B", {p, m, 0, false}));
  x.opt.workload = Workload::Synthetic;
  x.opt.costs = CostModel::uniform(p, 1, unit_costs());
  return x;
}

void BM_BuildRunPlan(benchmark::State& state) {
  Setup x = make(static_cast<std::uint32_t>(state.range(0)), static_cast<std::uint32_t>(state.range(1)));
  std::size_t launches = 0;
  for (auto _ : state) {
    RunPlan plan = build_run_plan(x.s, x.s.placement.stage_to_rank, x.opt);
    std::string problem = check_host_order(plan);
    launches = plan.ops.size();
    benchmark::DoNotOptimize(problem.data());
  }
  state.counters["launches"] = static_cast<double>(launches);
  state.counters["launches/s"] =
      benchmark::Counter(static_cast<double>(launches), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_FakeIteration(benchmark::State& state) {
  Setup x = make(static_cast<std::uint32_t>(state.range(0)), static_cast<std::uint32_t>(state.range(1)));
  RunPlan plan = build_run_plan(x.s, x.s.placement.stage_to_rank, x.opt);
  FakeDevice dev({});
  dev.setup(plan.device);
  MeasureOptions m;
  m.warmup = 0;
  m.rule.max_iters = 1;
  for (auto _ : state) {
    Measurement r = measure(dev, plan, m);
    benchmark::DoNotOptimize(r.iteration_us.data());
  }
  state.counters["launches"] = static_cast<double>(plan.ops.size());
  state.counters["launches/s"] =
      benchmark::Counter(static_cast<double>(plan.ops.size()), benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

BENCHMARK(BM_BuildRunPlan)
    ->ArgNames({"p", "m"})
    ->Args({4, 8})
    ->Args({8, 64})
    ->Args({64, 1024})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FakeIteration)
    ->ArgNames({"p", "m"})
    ->Args({4, 8})
    ->Args({8, 64})
    ->Args({64, 1024})
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
