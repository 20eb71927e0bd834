// `tune` on a model file: the target is an 80-layer model over 64 ranks, global batch 2048,
// every family and stages per rank 1/2/4, in under 2 s on this project's 2-core machines. The
// benchmark runs the engine as the command does: the model read once, each placement and
// microbatch size derived with the roofline, every trial lowered for PyTorch's runtime and
// simulated (docs/bench.md).
#include <benchmark/benchmark.h>

#include <stdexcept>

#include "diag/diagnostic.hpp"
#include "model/gpu.hpp"
#include "model/partition.hpp"
#include "model/stage_model.hpp"
#include "parse/model_json.hpp"
#include "tune/tune.hpp"

namespace {

using namespace ppsched;

NetworkModel load(const char* name) {
  DiagnosticSink sink;
  auto model = read_model(std::string(PPSCHED_SOURCE_DIR) + "/schedules/" + name, sink);
  if (!model) throw std::runtime_error(std::string("cannot read ") + name);
  return *model;
}

// ranks, global batch; the model by index: 0 = llama3-70b (80 blocks), 1 = llama3-8b (32 blocks).
void BM_TuneModel(benchmark::State& state) {
  const NetworkModel model = load(state.range(2) == 0 ? "llama3-70b.model.json" : "llama3-8b.model.json");
  const GpuSpec* gpu = find_gpu("h100");
  TuneRequest req;
  req.ranks = static_cast<std::uint32_t>(state.range(0));
  req.global_batch = static_cast<std::uint32_t>(state.range(1));
  req.max_stages = model.block_count();
  std::size_t trials = 0;
  for (auto _ : state) {
    auto result = tune_schedules(req, tune_trials(req), [&](const std::vector<std::uint32_t>& stage_to_rank, std::uint32_t b) {
      const auto stages = static_cast<std::uint32_t>(stage_to_rank.size());
      const Partition partition = balanced_partition(model, stages, gpu, b);
      return std::optional<SimInputs>(sim_inputs_from_stages(derive_stages(model, partition, gpu, b), stage_to_rank, req.ranks));
    });
    trials = result->trials.size();
    benchmark::DoNotOptimize(result);
  }
  state.counters["trials"] = double(trials);
  state.counters["shapes"] = double(tune_shapes(req).size());
}

}  // namespace

BENCHMARK(BM_TuneModel)
    ->ArgNames({"ranks", "G", "model"})
    ->Args({64, 2048, 0})
    ->Args({16, 2048, 0})
    ->Args({8, 256, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

BENCHMARK_MAIN();
