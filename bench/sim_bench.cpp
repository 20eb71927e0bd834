// Simulation speed (lib/sim), against PyTorch's figures in ../shared/docs/pytorch-baseline.md.
//
//   BM_SimulateTimed1f1b      the timed model on 1F1B with 64 ranks lowered with send/recv:
//                             16384 microbatches is 6.2M actions, the schedule PyTorch's
//                             _simulate_comms_compute took 110 s on; the target is < 0.1 s
//   BM_SimulateSteps1f1b      PyTorch's lock-step model (ppsched's exact reproduction), same input
//   BM_SimulateTimedSizes     actions/s from 1e3 to 1e7 actions
//   BM_TimelineWriteFloor     no simulation at all: only allocating a Timeline of 6.2M entries
//                             and writing it in the order the simulator does (one entry of
//                             each of 128 streams in turn), fresh (arg 1, as every run does)
//                             or into reused arrays (arg 0): the floor under any simulator
//                             that produces this Timeline on this machine
//   BM_SimulateTimedQueues1f1b  BM_SimulateTimed1f1b with split communicator queues (0 per-rank,
//                             1 per-direction, 2 per-edge)
//   BM_SimulateAggregates1f1b the aggregates run (simulate_aggregates: summary, validate's
//                             deadlock verdict), same input, on two threads (one:0) and on one (one:1)
//   BM_StepWaits1f1b          the dry run's placing of each action (pytorch_step_waits), same input,
//                             on two threads (one:0) and on one (one:1)
//   BM_FindStuck1f1b          the verdict-only run (find_stuck, what `validate` uses without
//                             thresholds) on the same 6.2M-action schedule
//
// Counters: actions, actions/s, and bytes_per_action: the timeline plus the simulator's own
// working arrays, per action (the schedule itself adds 8 bytes per action).
#include <benchmark/benchmark.h>

#include <map>
#include <optional>

#include "ir/rank_halves.hpp"
#include "passes/passes.hpp"
#include "sim/activation_liveness.hpp"
#include "sim/aggregate.hpp"
#include "sim/memory.hpp"
#include "sim/pytorch_steps.hpp"
#include "sim/timed.hpp"
#include "synth/synth.hpp"

namespace {

using namespace ppsched;

const Schedule& lowered_1f1b(std::uint32_t ranks, std::uint32_t microbatches) {
  static std::map<std::pair<std::uint32_t, std::uint32_t>, Schedule> cache;
  auto key = std::make_pair(ranks, microbatches);
  auto it = cache.find(key);
  if (it == cache.end()) {
    SynthParams p;
    p.ranks = ranks;
    p.microbatches = microbatches;
    it = cache.emplace(key, lower_send_recv(synthesize("1F1B", p))).first;
  }
  return it->second;
}

double timeline_bytes(const Timeline& t) {
  return static_cast<double>(t.start.capacity() * 8 + t.end.capacity() * 8 + t.stream.capacity() +
                             t.step.capacity() * 4 + t.released_by.capacity() * 4 + t.peer.capacity() * 4);
}

void run_timed(benchmark::State& state, std::uint32_t ranks, std::uint32_t microbatches,
               P2pQueues queues = P2pQueues::PerRank) {
  const Schedule& s = lowered_1f1b(ranks, microbatches);
  TimedOptions opt;
  opt.costs = CostModel::uniform(s.num_stages, 1, unit_costs());
  opt.p2p_queues = queues;
  Timeline t;
  for (auto _ : state) {
    t = simulate_timed(s, s.placement.stage_to_rank, opt);
    benchmark::DoNotOptimize(t.end.data());
  }
  state.counters["actions"] = static_cast<double>(t.size());
  // Working arrays: 6 event keys and 6 waiter heads (4 bytes each) per (stage, microbatch), and
  // per entry its state byte and, with split queues, the link to the next entry of its stream.
  const double per_entry = queues == P2pQueues::PerRank ? 1.0 : 5.0;
  double working = 48.0 * s.num_stages * s.num_microbatches + per_entry * static_cast<double>(t.size());
  state.counters["bytes_per_action"] = (timeline_bytes(t) + working) / static_cast<double>(t.size());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * t.size()));
}

void BM_SimulateTimed1f1b(benchmark::State& state) { run_timed(state, 64, static_cast<std::uint32_t>(state.range(0))); }

// The same with the communicator queues split (sim/p2p_queues.hpp): 0 per-rank, 1 per-direction,
// 2 per-edge. In lowered 1F1B a rank talks to two neighbours, so per-edge has up to four comm queues.
void BM_SimulateTimedQueues1f1b(benchmark::State& state) {
  run_timed(state, 64, 16384, static_cast<P2pQueues>(state.range(0)));
}

void BM_SimulateTimedSizes(benchmark::State& state) {
  // ~6 actions per (rank, microbatch) after lowering; 8 ranks for the small sizes.
  auto target = static_cast<std::uint32_t>(state.range(0));
  std::uint32_t ranks = target >= 100000 ? 64 : 8;
  run_timed(state, ranks, std::max<std::uint32_t>(ranks, target / (6 * ranks)));
}

// The same timed model with aggregates only (simulate_aggregates: summary, bubbles, peak memory):
// no Timeline, event slots in a ring of live microbatches. bytes_per_action counts its working
// arrays (the ring, the per-microbatch counts, per-stream and per-rank state).
void run_aggregates(benchmark::State& state, std::uint32_t ranks, std::uint32_t microbatches) {
  const Schedule& s = lowered_1f1b(ranks, microbatches);
  const std::size_t actions = s.action_count();
  TimedOptions opt;
  opt.costs = CostModel::uniform(s.num_stages, 1, unit_costs());
  const MemoryModel memory;
  AggregateStats stats;
  for (auto _ : state) {
    SimAnalysis a = simulate_aggregates(s, s.placement.stage_to_rank, opt, memory, &stats);
    benchmark::DoNotOptimize(&a.makespan);
  }
  if (stats.fell_back) state.SkipWithError("simulate_aggregates fell back to the Timeline path");
  state.counters["actions"] = static_cast<double>(actions);
  state.counters["window"] = stats.window;
  const double ring = 32.0 * stats.window * s.num_stages * 6;  // 24-byte slots, counted at 32
  const double working = ring + 4.0 * s.num_microbatches + 160.0 * s.rank_count();
  state.counters["bytes_per_action"] = working / static_cast<double>(actions);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * actions));
}

void BM_SimulateAggregates1f1b(benchmark::State& state) {
  std::optional<OneThreadHere> one;
  if (state.range(1)) one.emplace();
  run_aggregates(state, 64, static_cast<std::uint32_t>(state.range(0)));
}

void BM_SimulateAggregatesSizes(benchmark::State& state) {
  auto target = static_cast<std::uint32_t>(state.range(0));
  std::uint32_t ranks = target >= 100000 ? 64 : 8;
  run_aggregates(state, ranks, std::max<std::uint32_t>(ranks, target / (6 * ranks)));
}

void BM_SimulateSteps1f1b(benchmark::State& state) {
  const Schedule& s = lowered_1f1b(64, static_cast<std::uint32_t>(state.range(0)));
  std::size_t actions = s.action_count();
  for (auto _ : state) {
    Schedule t = simulate_pytorch_steps(s, s.placement.stage_to_rank, s.num_stages);
    benchmark::DoNotOptimize(t.ranks.data());
  }
  state.counters["actions"] = static_cast<double>(actions);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * actions));
}

// The dry run's placing alone (step_waits_by_moments): what `simulate --simulator pytorch-steps
// --format csv` spends between reading and writing. Two threads from a million steps; one:1 keeps
// it on one, to see what the second thread gains.
void BM_StepWaits1f1b(benchmark::State& state) {
  const Schedule& s = lowered_1f1b(64, static_cast<std::uint32_t>(state.range(0)));
  std::size_t actions = s.action_count();
  std::optional<OneThreadHere> one;
  if (state.range(1)) one.emplace();
  for (auto _ : state) {
    StepWaits w = pytorch_step_waits(s, s.placement.stage_to_rank, s.num_stages);
    benchmark::DoNotOptimize(w.cells.data());
  }
  state.counters["actions"] = static_cast<double>(actions);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * actions));
}

void BM_FindStuck1f1b(benchmark::State& state) {
  const Schedule& s = lowered_1f1b(64, static_cast<std::uint32_t>(state.range(0)));
  std::size_t actions = s.action_count();
  std::size_t stuck = 0;
  for (auto _ : state) {
    auto heads = find_stuck(s, s.placement.stage_to_rank);
    stuck = heads.size();
    benchmark::DoNotOptimize(heads.data());
  }
  if (stuck != 0) state.SkipWithError("the 1F1B schedule was reported stuck");
  state.counters["actions"] = static_cast<double>(actions);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * actions));
}

void BM_TimelineWriteFloor(benchmark::State& state) {
  const std::size_t n = 6225920, streams = 128, per_stream = n / streams;
  const bool fresh = state.range(0) != 0;
  Timeline t;
  auto allocate = [&] {
    t = Timeline{};
    t.start.resize(n);
    t.end.resize(n);
    t.stream.resize(n);
    t.step.resize(n);
    t.released_by.resize(n);
    t.peer.resize(n);
  };
  allocate();
  for (auto _ : state) {
    if (fresh) allocate();
    double time = 0;
    for (std::size_t i = 0; i < per_stream; ++i)
      for (std::size_t id = 0; id < streams; ++id) {
        std::size_t e = id * per_stream + i;
        time += 1;
        t.start[e] = time;
        t.end[e] = time + 1;
        t.stream[e] = Stream::Compute;
        t.step[e] = static_cast<std::uint32_t>(i);
        t.released_by[e] = static_cast<std::uint32_t>(e - 1);
        t.peer[e] = Timeline::kNone;
      }
    benchmark::DoNotOptimize(t.end.data());
    benchmark::ClobberMemory();
  }
  state.counters["actions"] = static_cast<double>(n);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}

// The two memory models on one schedule, 1F1B 64 x 16384 lowered (6.2M actions): the byte model
// over a simulated timeline (compute_memory) and PyTorch's activation liveness over the order
// (activation_liveness, the finer of its granularities). The issue asks the second to cost no more.
void BM_MemoryBytes1f1b(benchmark::State& state) {
  const Schedule& s = lowered_1f1b(64, static_cast<std::uint32_t>(state.range(0)));
  TimedOptions opt;
  opt.costs = CostModel::uniform(s.num_stages, 1, unit_costs());
  const Timeline t = simulate_timed(s, s.placement.stage_to_rank, opt);
  MemoryModel model;
  MemoryProfile p;
  for (auto _ : state) {
    p = compute_memory(s, t, model);
    benchmark::DoNotOptimize(p.per_rank.data());
  }
  state.counters["actions"] = static_cast<double>(t.size());
}

void BM_LivenessSlots1f1b(benchmark::State& state) {
  const Schedule& s = lowered_1f1b(64, static_cast<std::uint32_t>(state.range(0)));
  ActivationLiveness l;
  for (auto _ : state) {
    l = activation_liveness(s, s.placement.stage_to_rank, stated_microbatches(s), LivenessGranularity::StageMicrobatch);
    benchmark::DoNotOptimize(l.slots_per_rank.data());
  }
  state.counters["peak_slots"] = l.peak;
}

BENCHMARK(BM_MemoryBytes1f1b)
    ->ArgName("microbatches")
    ->Arg(16384)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);
BENCHMARK(BM_LivenessSlots1f1b)
    ->ArgName("microbatches")
    ->Arg(16384)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);
BENCHMARK(BM_SimulateTimed1f1b)
    ->ArgName("microbatches")
    ->Arg(16384)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(5);
BENCHMARK(BM_SimulateAggregates1f1b)
    ->ArgNames({"microbatches", "one"})
    ->Args({16384, 0})
    ->Args({16384, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(5);
BENCHMARK(BM_SimulateAggregatesSizes)
    ->ArgName("actions")
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Arg(1000000)
    ->Arg(10000000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_TimelineWriteFloor)
    ->ArgName("fresh")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(5);
BENCHMARK(BM_SimulateTimedQueues1f1b)
    ->ArgName("queues")
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Iterations(5)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_FindStuck1f1b)
    ->ArgName("microbatches")
    ->Arg(16384)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(5);
BENCHMARK(BM_SimulateSteps1f1b)
    ->ArgName("microbatches")
    ->Arg(16384)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);
BENCHMARK(BM_StepWaits1f1b)
    ->ArgNames({"microbatches", "one"})
    ->Args({16384, 0})
    ->Args({16384, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(10);
BENCHMARK(BM_SimulateTimedSizes)
    ->ArgName("actions")
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Arg(1000000)
    ->Arg(10000000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(0.2);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("ppsched_sim_input",
                              "1F1B lowered with send/recv, unit costs, no comm time; "
                              "PyTorch baseline: 110 s for 64 x 16384 (6.2M actions)");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
