// Synthesis and lowering speed (lib/synth, lib/passes), against PyTorch's figures in
// ../shared/docs/pytorch-baseline.md (same kind of machine, CPython 3.11, one core).
//
//   BM_SynthesizeZbv      synthesize("ZBVZeroBubble", 64 ranks, M microbatches)
//   BM_LowerRuntimeZbv    lower_runtime on it: validate, unshard/reshard, reduce-grad, send/recv
//   BM_SynthLowerZbv      both: the headline, ZBV 64 x 2048 (1.8M actions after lowering);
//                         PyTorch's full lowering alone took 362 s there
//   BM_Synth1f1bSendRecv  1F1B 64 ranks x 16384 microbatches lowered with send/recv (6.2M
//                         actions, the schedule whose simulation PyTorch took 110 s for);
//                         PyTorch's _add_send_recv took 21.9 s on it
//
// Counters: actions (after lowering), actions per second, and ir_bytes_per_action, the bytes
// the result holds per action (8 for the action itself plus unused vector capacity).
#include <benchmark/benchmark.h>

#include "passes/passes.hpp"
#include "synth/synth.hpp"

namespace {

using namespace ppsched;

Schedule make(const char* family, std::uint32_t ranks, std::uint32_t microbatches) {
  SynthParams p;
  p.ranks = ranks;
  p.microbatches = microbatches;
  return synthesize(family, p);
}

double bytes_per_action(const Schedule& s) {
  std::size_t bytes = s.ranks.capacity() * sizeof(RankProgram);
  for (const auto& r : s.ranks) bytes += r.actions.capacity() * sizeof(Action);
  return static_cast<double>(bytes) / static_cast<double>(std::max<std::size_t>(1, s.step_count()));
}

void report(benchmark::State& state, const Schedule& s) {
  state.counters["actions"] = static_cast<double>(s.step_count());
  state.counters["ir_bytes_per_action"] = bytes_per_action(s);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * s.step_count()));
}

void BM_SynthesizeZbv(benchmark::State& state) {
  Schedule s;
  for (auto _ : state) {
    s = make("ZBVZeroBubble", 64, static_cast<std::uint32_t>(state.range(0)));
    benchmark::DoNotOptimize(s.ranks.data());
  }
  report(state, s);
}

void BM_LowerRuntimeZbv(benchmark::State& state) {
  Schedule compute = make("ZBVZeroBubble", 64, static_cast<std::uint32_t>(state.range(0)));
  Schedule lowered;
  for (auto _ : state) {
    lowered = lower_runtime(compute);
    benchmark::DoNotOptimize(lowered.ranks.data());
  }
  report(state, lowered);
}

// PyTorch's lowering keywords on the same schedule: arg 1 picks them (0: defer_pp_recv; 1:
// max_active_stages=1; 2: max_active_stages=0, the look-ahead to the end of the rank).
void BM_LowerRuntimeZbvKeywords(benchmark::State& state) {
  Schedule compute = make("ZBVZeroBubble", 64, static_cast<std::uint32_t>(state.range(0)));
  const RuntimeLowering keywords[] = {{3, true}, {1, false}, {0, false}};
  const RuntimeLowering& k = keywords[state.range(1)];
  Schedule lowered;
  for (auto _ : state) {
    lowered = lower_runtime(compute, k);
    benchmark::DoNotOptimize(lowered.ranks.data());
  }
  state.SetLabel(state.range(1) == 0   ? "defer_pp_recv"
                 : state.range(1) == 1 ? "max_active_stages=1"
                                       : "max_active_stages=0");
  report(state, lowered);
}

void BM_SynthLowerZbv(benchmark::State& state) {
  Schedule lowered;
  for (auto _ : state) {
    lowered = lower_runtime(make("ZBVZeroBubble", 64, static_cast<std::uint32_t>(state.range(0))));
    benchmark::DoNotOptimize(lowered.ranks.data());
  }
  report(state, lowered);
}

void BM_Synth1f1bSendRecv(benchmark::State& state) {
  Schedule lowered;
  for (auto _ : state) {
    lowered = lower_send_recv(make("1F1B", 64, static_cast<std::uint32_t>(state.range(0))));
    benchmark::DoNotOptimize(lowered.ranks.data());
  }
  report(state, lowered);
}

void zbv_sizes(benchmark::internal::Benchmark* b) {
  b->ArgName("microbatches")->Arg(128)->Arg(512)->Arg(2048);
  b->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.3);
}

BENCHMARK(BM_SynthesizeZbv)->Apply(zbv_sizes);
BENCHMARK(BM_LowerRuntimeZbv)->Apply(zbv_sizes);
BENCHMARK(BM_LowerRuntimeZbvKeywords)
    ->ArgNames({"microbatches", "keywords"})
    ->ArgsProduct({{2048}, {0, 1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(0.3);
BENCHMARK(BM_SynthLowerZbv)->Apply(zbv_sizes);
BENCHMARK(BM_Synth1f1bSendRecv)
    ->ArgName("microbatches")
    ->Arg(16384)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("ppsched_synth_input",
                              "ZBVZeroBubble and 1F1B with 64 ranks; PyTorch baseline: "
                              "docs pytorch-baseline.md (ZBV 64x2048 full lowering 362 s)");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
