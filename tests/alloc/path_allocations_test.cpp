// Issue 48's guard: validate, the lock-step dry run (both its CSV and its text faces), simulate's
// summary figures and the send/recv lowering allocate nothing per action. Each path runs on 1F1B
// lowered with send/recv, 16 ranks, at two lengths (about 0.5M and 1M actions), under a global
// operator new that counts; the longer run may allocate only a little more than the shorter
// (a vector's doublings and the like), nowhere near one allocation per action or per microbatch.
//
// Its own executable: the counting operator new replaces the global one for everything linked.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "check/check.hpp"
#include "check/expectations.hpp"
#include "io/byte_sink.hpp"
#include "model/costs.hpp"
#include "parse/pytorch_csv.hpp"
#include "passes/passes.hpp"
#include "report/steps_view.hpp"
#include "sim/memory.hpp"
#include "sim/pytorch_steps.hpp"
#include "sim/runtime.hpp"
#include "synth/synth.hpp"

namespace {
std::atomic<std::size_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
// Every form the program may call, so that no block passes between this pair and another (ASan
// aborts on a nothrow new of its own freed here: Catch2 registers its tests with one).
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t& tag) noexcept { return operator new(n, tag); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace ppsched {
namespace {

constexpr std::uint32_t kRanks = 16;
constexpr std::uint32_t kLong = 11264, kShort = kLong / 2;  // microbatches: 1.04M and 0.52M actions

class NullSink final : public ByteSink {
 public:
  void write(std::string_view bytes) override { bytes_ += bytes.size(); }
  std::size_t bytes_ = 0;
};

Schedule compute_only(std::uint32_t microbatches) { return synthesize("1F1B", {kRanks, microbatches}); }

std::string send_recv_csv(std::uint32_t microbatches) {
  return to_pytorch_csv(lower_send_recv(compute_only(microbatches)));
}

ParsedSchedule parse(const std::string& text) {
  DiagnosticSink sink;
  auto parsed = read_pytorch_csv_text("1f1b.csv", text, {}, sink);
  REQUIRE(parsed);
  return std::move(*parsed);
}

// How many times `path` allocates on the input `make` gives for `microbatches`, made beforehand.
template <class Make, class Path>
std::size_t allocations(std::uint32_t microbatches, Make make, Path path) {
  auto input = make(microbatches);
  const std::size_t before = g_allocations.load();
  path(input);
  return g_allocations.load() - before;
}

// The bound: the longer run has 0.52M more actions and 5,632 more microbatches per stage. A
// vector that grows by doubling allocates once more when it holds twice as much, and the paths
// keep a few such per rank and kind; 256 is far below one allocation per microbatch (5,632 more).
constexpr std::size_t kMostExtra = 256;

template <class Path, class Make = decltype(&send_recv_csv)>
void check_path(const char* name, Path path, Make make = &send_recv_csv) {
  const std::size_t shorter = allocations(kShort, make, path), longer = allocations(kLong, make, path);
  INFO(name << ": " << shorter << " allocations at " << kShort << " microbatches, " << longer << " at " << kLong);
  CHECK(longer <= shorter + kMostExtra);
}

TEST_CASE("validate allocates nothing per action") {
  check_path("validate", [](const std::string& text) {
    ParsedSchedule p = parse(text);
    const CheckContext ctx = resolve_context(p.schedule, &p.source, "1f1b.csv", {}).context;
    DiagnosticSink sink;
    run_checks(ctx, sink);
    CHECK(sink.diagnostics().empty());
  });
}

TEST_CASE("the lock-step dry run allocates nothing per action") {
  check_path("pytorch-steps", [](const std::string& text) {
    ParsedSchedule p = parse(text);
    Schedule s = std::move(p.schedule);
    // As `simulate --simulator pytorch-steps` runs it: the CSV off the waits, the grid off the timelines.
    const std::uint32_t stages = stated_stages(s);
    const StepWaits waits = pytorch_step_waits(s, placement_of(s).stage_to_rank, stages);
    NullSink csv, grid;
    write_pytorch_csv(s, waits, csv);
    put_step_timelines(s, waits, stages, s);
    write_steps_text(s, grid);
    CHECK(csv.bytes_ > text.size());
  });
}

TEST_CASE("simulate's summary allocates nothing per action") {
  check_path("summary", [](const std::string& text) {
    ParsedSchedule p = parse(text);
    const CheckContext ctx = resolve_context(p.schedule, &p.source, "1f1b.csv", {}).context;
    DiagnosticSink first(1);
    REQUIRE(check_structure(ctx, first) == 0);
    const Schedule& s = p.schedule;
    TimedOptions opt;
    opt.costs = CostModel::for_pipeline(kRanks, stated_stages(s));
    const SimAnalysis a = simulate_runtime(s, placement_of(s).stage_to_rank, opt, MemoryModel{}, RuntimeModel{});
    CHECK(a.makespan > 0);
  });
}

TEST_CASE("the send/recv lowering allocates nothing per action") {
  check_path(
      "lowering",
      [](const Schedule& s) {
        const Schedule lowered = lower_send_recv(s);
        NullSink csv;
        write_pytorch_csv(lowered, csv);
        CHECK(csv.bytes_ > 0);
      },
      &compute_only);
}

}  // namespace
}  // namespace ppsched
