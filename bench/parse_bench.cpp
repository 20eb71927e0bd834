// Throughput of PyTorch schedule CSV reading and writing (lib/parse/pytorch_csv.hpp).
//
// The input is what PyTorch's `compute_comms` dump of a large 1F1B run looks like: one row per
// rank, stage = rank, microbatches ascending, each F preceded by RECV_F and followed by SEND_F
// and each B by RECV_B / SEND_B (none at the pipeline ends), CRLF rows, cells like `3F17`,
// `3SEND_F17`, `4RECV_B16`. It is built once per size, lazily, as a Schedule and turned into
// text with to_pytorch_csv, so the bytes are exactly what ppsched writes.
//
//   BM_ParseCsvText  read_pytorch_csv_text, strict mode, from a string in memory
//   BM_ParseCsvFile  read_pytorch_csv from a temporary file (page cache warm: it was just written)
//   BM_WriteCsv      write_pytorch_csv into a sink that only counts bytes (no memory traffic
//                    for the output, so this is the formatting cost alone)
//
// Each runs at about 1e3, 1e4, 1e5, 1e6 and 1e7 actions (the argument is the target; the
// `actions` counter is the exact count). The 1e7 row is the headline: 10M actions is the size
// the IR is designed for (ir/action.hpp). Parse timings include freeing the previous
// iteration's result, as a real run pays it too. Correctness is checked after each timed loop,
// so a broken reader or writer shows as an error, not as a fast time.
//
// Run all areas with scripts/bench (Release build, JSON + Markdown table, see docs/bench.md),
// or this binary alone, e.g.
//   build/bench/ppsched_bench_parse --benchmark_filter='actions:10000000'
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "counting_sink.hpp"
#include "diag/diagnostic.hpp"
#include "io/byte_sink.hpp"
#include "ir/action.hpp"
#include "ir/schedule.hpp"
#include "parse/pytorch_csv.hpp"

namespace {

using ppsched::Action;
using ppsched::ActionKind;

constexpr std::int64_t kHeadlineActions = 10'000'000;
constexpr std::uint32_t kMaxRanks = 128;

// One rank's program of a 1F1B schedule with its communication lowered in, as PyTorch's
// compute_comms format holds it: warm-up forwards, then one forward / one backward, then the
// remaining backwards.
void append_1f1b_rank(std::vector<Action>& out, std::uint32_t rank, std::uint32_t ranks, std::uint32_t microbatches) {
  const auto stage = static_cast<std::uint16_t>(rank);
  const bool first = rank == 0, last = rank + 1 == ranks;
  auto forward = [&](std::uint32_t mb) {
    if (!first) out.push_back(Action::make(ActionKind::RecvF, stage, mb));
    out.push_back(Action::make(ActionKind::F, stage, mb));
    if (!last) out.push_back(Action::make(ActionKind::SendF, stage, mb));
  };
  auto backward = [&](std::uint32_t mb) {
    if (!last) out.push_back(Action::make(ActionKind::RecvB, stage, mb));
    out.push_back(Action::make(ActionKind::B, stage, mb));
    if (!first) out.push_back(Action::make(ActionKind::SendB, stage, mb));
  };
  const std::uint32_t warmup = std::min(ranks - 1 - rank, microbatches);
  std::uint32_t f = 0, b = 0;
  while (f < warmup) forward(f++);
  while (f < microbatches) {
    forward(f++);
    backward(b++);
  }
  while (b < microbatches) backward(b++);
}

/// The input of one size: the schedule, its CSV text, and (made on first use) a file copy.
struct Corpus {
  ppsched::Schedule schedule;  // no stated sizes or placement, like a schedule read from CSV
  std::string csv;
  std::size_t actions = 0;
  std::string file;        // path of the temporary copy; empty until file_path() makes it
  std::string file_error;  // why the copy could not be made

  ~Corpus() {
    if (!file.empty()) ::unlink(file.c_str());
  }

  // Writes the CSV to a fresh file under $TMPDIR (or /tmp) once; empty on failure. The file is
  // removed at exit (not if the process is killed).
  const std::string& file_path() {
    if (!file.empty() || !file_error.empty()) return file;
    const char* dir = std::getenv("TMPDIR");
    std::string templ = std::string(dir && *dir ? dir : "/tmp") + "/ppsched_bench_XXXXXX";
    int fd = ::mkstemp(templ.data());
    if (fd < 0) {
      file_error = templ + ": " + std::strerror(errno);
      return file;
    }
    file = templ;  // from here on the destructor removes it
    std::size_t done = 0;
    while (done < csv.size()) {
      ssize_t n = ::write(fd, csv.data() + done, csv.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        file_error = file + ": " + std::strerror(errno);
        break;
      }
      done += static_cast<std::size_t>(n);
    }
    ::close(fd);
    if (!file_error.empty()) {
      ::unlink(file.c_str());
      file.clear();
    }
    return file;
  }
};

// The schedule of about `target` actions: the most ranks (a power of two, at most 128) that
// still leave at least as many microbatches as ranks, then as many microbatches as get closest
// to the target. A microbatch costs 6 actions on an inner rank, 4 on each end rank.
std::unique_ptr<Corpus> make_corpus(std::int64_t target) {
  auto per_microbatch = [](std::uint32_t r) { return std::int64_t{6} * r - 4; };
  std::uint32_t ranks = 2;
  while (ranks < kMaxRanks && 2 * ranks * per_microbatch(2 * ranks) <= target) ranks *= 2;
  const auto microbatches = static_cast<std::uint32_t>(std::max<std::int64_t>(
      1, std::llround(static_cast<double>(target) / static_cast<double>(per_microbatch(ranks)))));

  auto c = std::make_unique<Corpus>();
  c->schedule.ranks.resize(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r) {
    auto& program = c->schedule.ranks[r].actions;
    program.reserve(std::size_t{6} * microbatches);
    append_1f1b_rank(program, r, ranks, microbatches);
  }
  c->actions = c->schedule.action_count();
  c->csv = ppsched::to_pytorch_csv(c->schedule);
  return c;
}

// Built on first use and kept for the whole run: the 10M-action one takes a second to make.
Corpus& corpus(std::int64_t target) {
  static std::map<std::int64_t, std::unique_ptr<Corpus>> cache;
  auto& slot = cache[target];
  if (!slot) slot = make_corpus(target);
  return *slot;
}

void report_throughput(benchmark::State& state, const Corpus& c) {
  const auto iterations = static_cast<std::int64_t>(state.iterations());
  state.SetBytesProcessed(iterations * static_cast<std::int64_t>(c.csv.size()));
  state.SetItemsProcessed(iterations * static_cast<std::int64_t>(c.actions));
  state.counters["actions"] = static_cast<double>(c.actions);
  state.counters["csv_bytes"] = static_cast<double>(c.csv.size());
}

// Checked once after the timed loop, so the check costs no measured time: the last parse
// succeeded, reported nothing, and gave back exactly the schedule that was written.
void check_parsed(benchmark::State& state, const Corpus& c, const std::optional<ppsched::ParsedSchedule>& parsed,
                  const ppsched::DiagnosticSink& sink) {
  if (!parsed) {
    state.SkipWithError(sink.diagnostics().empty() ? "parse failed"
                                                   : ("parse failed: " + sink.diagnostics().front().message).c_str());
  } else if (!sink.diagnostics().empty()) {
    state.SkipWithError(("unexpected diagnostic: " + sink.diagnostics().front().message).c_str());
  } else if (parsed->schedule.action_count() != c.actions) {
    state.SkipWithError(("parsed " + std::to_string(parsed->schedule.action_count()) + " actions, expected " +
                         std::to_string(c.actions))
                            .c_str());
  } else if (!ppsched::same_schedule(parsed->schedule, c.schedule)) {
    state.SkipWithError("parsed schedule differs from the one written");
  }
}

// The timed loop both parse benchmarks share: `parse(sink)` reads the corpus strictly, from text
// or from the file. Each iteration gets a fresh sink, as a CLI run would.
template <typename Parse>
void time_parse(benchmark::State& state, const Corpus& c, Parse parse) {
  std::optional<ppsched::ParsedSchedule> parsed;
  std::optional<ppsched::DiagnosticSink> sink;
  for (auto _ : state) {
    parsed.reset();
    sink.emplace();
    parsed = parse(*sink);
    if (!parsed) break;
  }
  if (sink) check_parsed(state, c, parsed, *sink);
  report_throughput(state, c);
}

void BM_ParseCsvText(benchmark::State& state) {
  Corpus& c = corpus(state.range(0));
  const ppsched::CsvReadOptions strict;
  time_parse(state, c, [&](ppsched::DiagnosticSink& sink) {
    return ppsched::read_pytorch_csv_text("bench.csv", c.csv, strict, sink);
  });
}

void BM_ParseCsvFile(benchmark::State& state) {
  Corpus& c = corpus(state.range(0));
  const std::string& path = c.file_path();
  if (path.empty()) {
    state.SkipWithError(("cannot write the temporary CSV: " + c.file_error).c_str());
    return;
  }
  const ppsched::CsvReadOptions strict;
  time_parse(state, c, [&](ppsched::DiagnosticSink& sink) { return ppsched::read_pytorch_csv(path, strict, sink); });
}

void BM_WriteCsv(benchmark::State& state) {
  Corpus& c = corpus(state.range(0));
  std::size_t written = 0;
  for (auto _ : state) {
    CountingSink sink;
    ppsched::write_pytorch_csv(c.schedule, sink);
    written = sink.bytes();
  }
  if (written != c.csv.size())
    state.SkipWithError(
        ("wrote " + std::to_string(written) + " bytes, expected " + std::to_string(c.csv.size())).c_str());
  report_throughput(state, c);
}

// Small sizes run for a minimum time; the headline runs a fixed, small number of iterations
// (a 10M-action parse takes under a second), which keeps the whole binary near 25 s on 2 cores.
void small_sizes(benchmark::internal::Benchmark* b) {
  b->ArgName("actions");
  for (std::int64_t n : {1'000, 10'000, 100'000, 1'000'000}) b->Arg(n);
  b->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.5);
}

void headline_size(benchmark::internal::Benchmark* b) {
  b->ArgName("actions")->Arg(kHeadlineActions);
  b->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);
}

BENCHMARK(BM_ParseCsvText)->Apply(small_sizes);
BENCHMARK(BM_ParseCsvText)->Apply(headline_size);
BENCHMARK(BM_ParseCsvFile)->Apply(small_sizes);
BENCHMARK(BM_ParseCsvFile)->Apply(headline_size);
BENCHMARK(BM_WriteCsv)->Apply(small_sizes);
BENCHMARK(BM_WriteCsv)->Apply(headline_size);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("ppsched_parse_input",
                              "PyTorch compute_comms CSV of a 1F1B schedule with SEND/RECV, stage = rank, CRLF; "
                              "up to 128 ranks; strict parsing");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
