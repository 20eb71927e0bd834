// Validation speed (lib/check): every rule on a large schedule, and the same after parsing it
// from CSV text, as `ppsched validate` does. The target is 10M actions in under 1 s.
//
//   BM_RunChecks          run_checks on 1F1B 64 ranks lowered with send/recv (~10M actions at
//                         26000 microbatches), without parsing
//   BM_ParseAndCheck      read_pytorch_csv_text + run_checks on the same schedule's CSV
#include <benchmark/benchmark.h>

#include <map>

#include "check/check.hpp"
#include "parse/pytorch_csv.hpp"
#include "passes/passes.hpp"
#include "synth/synth.hpp"

namespace {

using namespace ppsched;

const Schedule& lowered(std::uint32_t microbatches) {
  static std::map<std::uint32_t, Schedule> cache;
  auto it = cache.find(microbatches);
  if (it == cache.end()) {
    SynthParams p;
    p.ranks = 64;
    p.microbatches = microbatches;
    it = cache.emplace(microbatches, lower_send_recv(synthesize("1F1B", p))).first;
  }
  return it->second;
}

CheckContext context(const Schedule& s, const SourceMap* src) {
  CheckContext ctx;
  ctx.schedule = &s;
  ctx.source = src;
  ctx.file = "bench.csv";
  ctx.ranks = 64;
  ctx.stages = 64;
  ctx.microbatches = stated_microbatches(s);
  ctx.stage_to_rank = Placement::loop(64, 64).stage_to_rank;
  ctx.placement_inferred = false;
  ctx.has_comms = true;
  return ctx;
}

void BM_RunChecks(benchmark::State& state) {
  const Schedule& s = lowered(static_cast<std::uint32_t>(state.range(0)));
  std::size_t errors = 0;
  for (auto _ : state) {
    CheckContext ctx = context(s, nullptr);
    DiagnosticSink sink;
    run_checks(ctx, sink);
    errors = sink.error_count();
  }
  if (errors) state.SkipWithError("the schedule should be clean");
  state.counters["actions"] = static_cast<double>(s.action_count());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * s.action_count()));
}

void BM_ParseAndCheck(benchmark::State& state) {
  const Schedule& s = lowered(static_cast<std::uint32_t>(state.range(0)));
  static std::map<std::int64_t, std::string> texts;
  std::string& text = texts[state.range(0)];
  if (text.empty()) text = to_pytorch_csv(s);
  std::size_t errors = 0;
  for (auto _ : state) {
    DiagnosticSink sink;
    auto parsed = read_pytorch_csv_text("bench.csv", text, {}, sink);
    CheckContext ctx = context(parsed->schedule, &parsed->source);
    run_checks(ctx, sink);
    errors = sink.error_count();
  }
  if (errors) state.SkipWithError("the schedule should be clean");
  state.counters["actions"] = static_cast<double>(s.action_count());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * s.action_count()));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}

BENCHMARK(BM_RunChecks)
    ->ArgName("microbatches")
    ->Arg(2600)
    ->Arg(26000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);
BENCHMARK(BM_ParseAndCheck)
    ->ArgName("microbatches")
    ->Arg(26000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(2);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("ppsched_check_input",
                              "1F1B, 64 ranks, lowered with send/recv; 26000 microbatches is ~10M actions");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
