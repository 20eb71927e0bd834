// `tune` on a model file: the target is an 80-layer model over 64 ranks, global batch 2048,
// every family and stages per rank 1/2/4, in under 2 s on this project's 2-core machines. The
// benchmark runs the engine as the command does: the model read once, each placement and
// microbatch size derived with the roofline, every trial lowered for PyTorch's runtime and
// simulated (docs/bench.md). BM_TuneMemoryModel runs it under each memory model, to compare what
// --memory-model pytorch-liveness costs.
#include <benchmark/benchmark.h>

#include <stdexcept>

#include "diag/diagnostic.hpp"
#include "model/gpu.hpp"
#include "model/partition.hpp"
#include "model/stage_model.hpp"
#include "parse/model_json.hpp"
#include "tune/layouts.hpp"
#include "tune/tune.hpp"

namespace {

using namespace ppsched;

NetworkModel load(const char* name) {
  DiagnosticSink sink;
  auto model = read_model(std::string(PPSCHED_SOURCE_DIR) + "/schedules/" + name, sink);
  if (!model) throw std::runtime_error(std::string("cannot read ") + name);
  return *model;
}

// The engine on `model` over `ranks` ranks and global batch `g`, under the byte model or, with
// `liveness`, PyTorch's stage_microbatch slots (no cap, as the command without --memory-cap).
void tune_engine(benchmark::State& state, const NetworkModel& model, std::uint32_t ranks, std::uint32_t g,
                 bool liveness) {
  const GpuSpec* gpu = find_gpu("h100");
  TuneRequest req;
  req.ranks = ranks;
  req.global_batch = g;
  req.max_stages = model.block_count() + 2;
  if (liveness) req.liveness = LivenessGranularity::StageMicrobatch;
  std::size_t trials = 0;
  for (auto _ : state) {
    auto result =
        tune_schedules(req, tune_trials(req), [&](const std::vector<std::uint32_t>& stage_to_rank, std::uint32_t b) {
          const auto stages = static_cast<std::uint32_t>(stage_to_rank.size());
          const Partition partition = balanced_partition(model, stages, gpu, b);
          return std::optional<SimInputs>(
              sim_inputs_from_stages(derive_stages(model, partition, gpu, b), stage_to_rank, req.ranks));
        });
    trials = result->trials.size();
    benchmark::DoNotOptimize(result);
  }
  state.counters["trials"] = double(trials);
  state.counters["shapes"] = double(tune_shapes(req).size());
}

const char* model_file(std::int64_t index) { return index == 0 ? "llama3-70b.model.json" : "llama3-8b.model.json"; }

// ranks, global batch; the model by index: 0 = llama3-70b (80 blocks), 1 = llama3-8b (32 blocks).
void BM_TuneModel(benchmark::State& state) {
  tune_engine(state, load(model_file(state.range(2))), static_cast<std::uint32_t>(state.range(0)),
              static_cast<std::uint32_t>(state.range(1)), false);
}

// The same engine under each memory model, one after the other in one run: what --memory-model
// pytorch-liveness adds (each trial's slots, counted on its compute-only order).
void BM_TuneMemoryModel(benchmark::State& state) {
  tune_engine(state, load(model_file(state.range(2))), static_cast<std::uint32_t>(state.range(0)),
              static_cast<std::uint32_t>(state.range(1)), state.range(3) != 0);
}

// Pricing alone (issue target: an 80-block model priced for 1,024 stage counts and layouts in
// 0.5 s): Llama-3-70B split and priced 1,024 times, cycling over every stage count the auto layout
// allows (1 to 82) and, for each, the auto layout and explicit splits that move blocks from the
// first stage to the last. Each pricing is partition + derive_stages at one microbatch size.
void BM_PriceLayouts(benchmark::State& state) {
  const NetworkModel model = load(model_file(0));
  const GpuSpec* gpu = find_gpu("h100");
  const std::uint32_t n = model.block_count();
  const auto b = static_cast<std::uint32_t>(state.range(0));
  std::size_t pricings = 0;
  double checksum = 0;
  for (auto _ : state) {
    pricings = 0;
    for (std::uint32_t round = 0; pricings < 1024; ++round) {
      for (std::uint32_t stages = 1; stages <= n + 2 && pricings < 1024; ++stages, ++pricings) {
        Partition partition;
        if (round == 0 || stages > n) {
          partition = balanced_partition(model, stages, gpu, b);
        } else {  // an even split, then `round` blocks moved from the first stage to the last
          std::vector<std::uint32_t> blocks(stages, n / stages);
          for (std::uint32_t s = 0; s < n % stages; ++s) ++blocks[s];
          const std::uint32_t moved = std::min(round, blocks[0] - 1);
          blocks[0] -= moved;
          blocks.back() += moved;
          partition = explicit_partition(model, blocks, stages);
        }
        const StageModel priced = derive_stages(model, partition, gpu, b);
        checksum += priced.spec.front().weight_bytes;
      }
    }
    benchmark::DoNotOptimize(checksum);
  }
  state.counters["pricings"] = double(pricings);
}

// tune --gpus (issue 46's target: Llama-3-70B over 1,024 GPUs, every layout and family, within 5 s
// on this project's 2-core machines): the layout search as the command runs it.
void BM_TuneGpus(benchmark::State& state) {
  const NetworkModel model = load(state.range(2) == 0 ? "llama3-70b.model.json" : "deepseek-v3-like.model.json");
  LayoutRequest r;
  r.gpus = static_cast<std::uint32_t>(state.range(0));
  r.global_batch = static_cast<std::uint32_t>(state.range(1));
  std::size_t rows = 0, shapes = 0;
  for (auto _ : state) {
    const LayoutResult result = tune_layouts(r, model, *find_gpu("h100"));
    rows = result.trials.size();
    shapes = result.layouts;
    benchmark::DoNotOptimize(result);
  }
  state.counters["layouts"] = double(rows);
  state.counters["shapes"] = double(shapes);
}

}  // namespace

BENCHMARK(BM_TuneGpus)
    ->ArgNames({"gpus", "G", "model"})
    ->Args({1024, 2048, 0})
    ->Args({512, 1024, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

BENCHMARK(BM_PriceLayouts)
    ->ArgNames({"b"})
    ->Arg(1)
    ->Arg(8)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

BENCHMARK(BM_TuneModel)
    ->ArgNames({"ranks", "G", "model"})
    ->Args({64, 2048, 0})
    ->Args({16, 2048, 0})
    ->Args({8, 256, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

BENCHMARK(BM_TuneMemoryModel)
    ->ArgNames({"ranks", "G", "model", "liveness"})
    ->Args({16, 2048, 0, 0})
    ->Args({16, 2048, 0, 1})
    ->Args({8, 256, 1, 0})
    ->Args({8, 256, 1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

BENCHMARK_MAIN();
