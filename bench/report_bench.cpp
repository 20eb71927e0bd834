// Throughput of the timeline views (lib/report/trace_view.hpp, svg_gantt.hpp, ascii_gantt.hpp).
//
// The input is a synthetic simulated 1F1B run with explicit comms, as the timed simulator
// would give it: 64 ranks, stage = rank, F costs 1 and B 2, each F preceded by its RECV_F and
// followed by its SEND_F (and each B by RECV_B / SEND_B, none at the pipeline ends), on the
// compute, send and recv streams, every SEND paired with its RECV (Timeline::peer) and each
// entry released by the one before it. Built once per size, lazily.
//
//   BM_ChromeTrace         write_chrome_trace (v1 flows) into a sink that only counts bytes
//   BM_ChromeTraceMemory   the same with a memory profile (a counter point per F and B)
//   BM_SvgGantt            write_svg_gantt, default options (boxes merged to about 40k)
//   BM_AsciiGantt          ascii_gantt, 100 columns
//
// Sizes about 1M and 6M actions (`actions` counter: the exact count). bytes_per_second is the
// trace's output rate, items_per_second actions per second and `events_per_s` trace events
// (slices, flow ends, counters, metadata) per second. The target for the trace is at least
// 100 MB/s.
//
//   build/bench/ppsched_bench_report --benchmark_filter=BM_ChromeTrace/
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "counting_sink.hpp"
#include "io/byte_sink.hpp"
#include "ir/action.hpp"
#include "ir/schedule.hpp"
#include "report/ascii_gantt.hpp"
#include "report/svg_gantt.hpp"
#include "report/trace_view.hpp"
#include "sim/memory.hpp"
#include "sim/timeline.hpp"

namespace {

using ppsched::Action;
using ppsched::ActionKind;
using ppsched::Stream;
using ppsched::Timeline;

constexpr std::uint32_t kRanks = 64;

struct Input {
  ppsched::Schedule schedule;
  Timeline timeline;
  ppsched::MemoryProfile memory;
  std::size_t flows = 0;
};

// The input of about `target` actions: each rank's program and timeline entries in program
// order, with each SEND's and RECV's entry noted so the pairs can be linked at the end.
std::unique_ptr<Input> make_input(std::int64_t target) {
  const std::uint32_t ranks = kRanks;
  const auto per_microbatch = std::int64_t{6} * ranks - 4;
  const auto mbs = static_cast<std::uint32_t>(std::max<std::int64_t>(1, target / per_microbatch));
  auto in = std::make_unique<Input>();
  Timeline& t = in->timeline;
  in->schedule.ranks.resize(ranks);
  in->memory.per_rank.resize(ranks);
  const std::size_t slots = std::size_t{ranks} * mbs;
  std::vector<std::uint32_t> send_f(slots, Timeline::kNone), recv_f(slots, Timeline::kNone),
      send_b(slots, Timeline::kNone), recv_b(slots, Timeline::kNone);
  t.rank_begin.push_back(0);
  for (std::uint32_t r = 0; r < ranks; ++r) {
    auto& program = in->schedule.ranks[r].actions;
    auto& mem = in->memory.per_rank[r];
    const auto stage = static_cast<std::uint16_t>(r);
    double now = r, held = 0;
    auto add = [&](ActionKind k, std::uint32_t m, double a, double b, Stream st) {
      const auto e = static_cast<std::uint32_t>(t.start.size());
      t.start.push_back(a);
      t.end.push_back(b);
      t.stream.push_back(st);
      t.step.push_back(static_cast<std::uint32_t>(program.size()));
      t.released_by.push_back(e == t.rank_begin.back() ? Timeline::kNone : e - 1);
      t.peer.push_back(Timeline::kNone);
      program.push_back(Action::make(k, stage, m));
      return e;
    };
    auto fwd = [&](std::uint32_t m) {
      if (r > 0) {
        recv_f[std::size_t{r} * mbs + m] = add(ActionKind::RecvF, m, now, now + 0.25, Stream::Recv);
        now += 0.25;
      }
      add(ActionKind::F, m, now, now + 1, Stream::Compute);
      mem.push_back({now, held += 1});
      now += 1;
      if (r + 1 < ranks) send_f[std::size_t{r} * mbs + m] = add(ActionKind::SendF, m, now, now + 0.25, Stream::Send);
    };
    auto bwd = [&](std::uint32_t m) {
      if (r + 1 < ranks) {
        recv_b[std::size_t{r} * mbs + m] = add(ActionKind::RecvB, m, now, now + 0.25, Stream::Recv);
        now += 0.25;
      }
      add(ActionKind::B, m, now, now + 2, Stream::Compute);
      now += 2;
      mem.push_back({now, held -= 1});
      if (r > 0) send_b[std::size_t{r} * mbs + m] = add(ActionKind::SendB, m, now, now + 0.25, Stream::Send);
    };
    const std::uint32_t warmup = std::min(ranks - 1 - r, mbs);
    std::uint32_t f = 0, b = 0;
    while (f < warmup) fwd(f++);
    while (f < mbs) {
      fwd(f++);
      bwd(b++);
    }
    while (b < mbs) bwd(b++);
    t.makespan = std::max(t.makespan, now + 0.25);
    t.rank_begin.push_back(static_cast<std::uint32_t>(t.start.size()));
  }
  auto link = [&](std::uint32_t a, std::uint32_t b) {
    if (a == Timeline::kNone || b == Timeline::kNone) return;
    t.peer[a] = b;
    t.peer[b] = a;
    ++in->flows;
  };
  for (std::uint32_t r = 0; r + 1 < ranks; ++r)
    for (std::uint32_t m = 0; m < mbs; ++m) {
      link(send_f[std::size_t{r} * mbs + m], recv_f[std::size_t{r + 1} * mbs + m]);
      link(send_b[std::size_t{r + 1} * mbs + m], recv_b[std::size_t{r} * mbs + m]);
    }
  return in;
}

const Input& input(std::int64_t target) {
  static std::map<std::int64_t, std::unique_ptr<Input>> cache;
  auto& slot = cache[target];
  if (!slot) slot = make_input(target);
  return *slot;
}

void report(benchmark::State& state, const Input& in, std::size_t bytes, std::size_t events) {
  const auto iterations = static_cast<std::int64_t>(state.iterations());
  state.SetBytesProcessed(iterations * static_cast<std::int64_t>(bytes));
  state.SetItemsProcessed(iterations * static_cast<std::int64_t>(in.timeline.size()));
  state.counters["actions"] = static_cast<double>(in.timeline.size());
  state.counters["output_MB"] = static_cast<double>(bytes) / 1e6;
  if (events)
    state.counters["events_per_s"] =
        benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsIterationInvariantRate);
}

void trace(benchmark::State& state, bool with_memory) {
  const Input& in = input(state.range(0));
  std::size_t bytes = 0;
  for (auto _ : state) {
    CountingSink sink;
    ppsched::write_chrome_trace(in.schedule, in.timeline, with_memory ? &in.memory : nullptr, sink, {});
    bytes = sink.bytes();
  }
  // Slices, both ends of each flow, counters, and per rank 2 process + 6 thread metadata.
  std::size_t events = in.timeline.size() + 2 * in.flows + 8 * in.schedule.rank_count();
  if (with_memory)
    for (const auto& points : in.memory.per_rank) events += points.size();
  report(state, in, bytes, events);
}

void BM_ChromeTrace(benchmark::State& state) { trace(state, false); }
void BM_ChromeTraceMemory(benchmark::State& state) { trace(state, true); }

void BM_SvgGantt(benchmark::State& state) {
  const Input& in = input(state.range(0));
  std::size_t bytes = 0;
  for (auto _ : state) {
    CountingSink sink;
    ppsched::write_svg_gantt(in.schedule, in.timeline, sink, {});
    bytes = sink.bytes();
  }
  report(state, in, bytes, 0);
}

void BM_AsciiGantt(benchmark::State& state) {
  const Input& in = input(state.range(0));
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string chart = ppsched::ascii_gantt(in.schedule, in.timeline, {});
    bytes = chart.size();
    benchmark::DoNotOptimize(chart.data());
  }
  report(state, in, bytes, 0);
}

void sizes(benchmark::internal::Benchmark* b) {
  b->ArgName("actions")->Arg(1'000'000)->Arg(6'000'000);
  b->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.5);
}

BENCHMARK(BM_ChromeTrace)->Apply(sizes);
BENCHMARK(BM_ChromeTraceMemory)->Apply(sizes);
BENCHMARK(BM_SvgGantt)->Apply(sizes);
BENCHMARK(BM_AsciiGantt)->Apply(sizes);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("ppsched_report_input",
                              "synthetic 1F1B timeline with explicit comms on compute/send/recv streams, "
                              "64 ranks, every SEND paired with its RECV; counting sink");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
