// run_benchmarks, the library side of `ppsched run`, on the fake device: devices are discovered
// exactly once however many schedules run, and the cost table a run measures, fed back to the
// simulator, predicts the measured iteration within 5% (the loop, here with jitter).
#include <atomic>

#include "model/costs.hpp"
#include "parse/cost_table.hpp"
#include "passes/passes.hpp"
#include "run/benchmark.hpp"
#include "run/fake_device.hpp"
#include "support/catch.hpp"
#include "synth/synth.hpp"

using namespace ppsched;
using namespace ppsched::run;

namespace {

RunRequest request(const char* family, std::uint32_t ranks, std::uint32_t mbs, const CostModel& costs) {
  RunRequest r;
  r.name = family;
  r.schedule = lower_send_recv(synthesize(family, {ranks, mbs, 0, false}));
  r.stage_to_rank = r.schedule.placement.stage_to_rank;
  r.plan.workload = Workload::Synthetic;
  r.plan.costs = costs;
  r.sim.costs = costs;
  return r;
}

CostModel uneven_costs(std::uint32_t stages, std::uint32_t per_rank) {
  KindCosts k = unit_costs();
  k[static_cast<int>(ActionKind::F)] = 100;
  k[static_cast<int>(ActionKind::I)] = 120;
  k[static_cast<int>(ActionKind::W)] = 80;
  k[static_cast<int>(ActionKind::B)] = 200;
  CostModel c = CostModel::uniform(stages, per_rank, k);
  for (std::uint32_t s = 0; s < stages; ++s)
    for (double& v : c.per_stage[s]) v *= 1.0 + 0.1 * s;  // later stages are heavier
  return c;
}

MeasureOptions quick() {
  MeasureOptions m;
  m.warmup = 2;
  m.rule.max_iters = 20;  // a fixed count: with jitter the noise rule would run to its timeout
  return m;
}

}  // namespace

TEST_CASE("devices are discovered once per process, however many schedules run") {
  FakeRuntime runtime({2, 0.01, 3});
  std::vector<RunRequest> reqs;
  for (const char* f : {"1F1B", "ZBH1", "GPipe", "Interleaved1F1B"}) {
    const std::uint32_t v = std::string(f) == "Interleaved1F1B" ? 2 : 1;
    reqs.push_back(request(f, 4, 8, uneven_costs(4 * v, v)));
  }
  BenchmarkReport report = run_benchmarks(runtime, reqs, {}, quick());
  CHECK(runtime.discover_calls() == 1);
  REQUIRE(report.results.size() == 4);
  for (const RunResult& r : report.results) {
    CHECK(r.measured.iteration.count == 20);
    CHECK(r.plan.device.device_of_rank == std::vector<int>{0, 0, 1, 1});  // 4 ranks on 2 devices
  }
  // A second batch in the same process goes through the same, already discovered devices only
  // when the caller keeps them: run_benchmarks itself is the one discovery of a command.
  run_benchmarks(runtime, {request("1F1B", 4, 4, uneven_costs(4, 1))}, {}, quick());
  CHECK(runtime.discover_calls() == 2);
}

TEST_CASE("the measured cost table fed to the simulator predicts the measured iteration within 5%") {
  struct Case {
    const char* family;
    std::uint32_t v;
  };
  for (Case c : {Case{"1F1B", 1}, Case{"ZBH1", 1}, Case{"ZBVZeroBubble", 2}}) {
    INFO(c.family);
    FakeRuntime runtime({1, 0.05, 11});  // 5% jitter on every launch
    CostModel truth = uneven_costs(4 * c.v, c.v);
    BenchmarkReport report = run_benchmarks(runtime, {request(c.family, 4, 8, truth)}, {}, quick());
    REQUIRE(report.results.size() == 1);
    const RunResult& r = report.results[0];
    // Read the cost table back exactly as `ppsched simulate --costs` does.
    CostModel measured = CostModel::uniform(4 * c.v, c.v, unit_costs());
    DiagnosticSink sink;
    REQUIRE(read_cost_text("measured.csv", cost_table_csv(measured_costs(r.measured)), measured, sink));
    for (std::uint32_t s = 0; s < 4 * c.v; ++s)
      CHECK(measured.cost(static_cast<std::uint16_t>(s), ActionKind::F) ==
            Approx(truth.cost(static_cast<std::uint16_t>(s), ActionKind::F)).epsilon(0.05));
    TimedOptions sim;
    sim.costs = measured;
    const Schedule s = request(c.family, 4, 8, truth).schedule;
    const double predicted = simulate_timed(s, s.placement.stage_to_rank, sim).makespan;
    CHECK(predicted == Approx(r.measured.iteration.median).epsilon(0.05));
    CHECK(r.ratio() == Approx(1.0).epsilon(0.05));
  }
}

TEST_CASE("an interrupt stops at an iteration boundary and is reported") {
  FakeRuntime runtime;
  std::atomic<bool> stop{false};
  MeasureOptions m = quick();
  m.interrupted = &stop;
  int iterations = 0;
  m.wall_clock = [&] {
    if (++iterations == 6) stop = true;  // a Ctrl-C arrives during timing
    return 0.0;
  };
  m.rule.max_iters = 0;
  m.rule.min_samples = 1000;
  m.rule.min_time_s = 0;
  BenchmarkReport report =
      run_benchmarks(runtime, {request("1F1B", 2, 4, uneven_costs(2, 1)), request("1F1B", 2, 4, uneven_costs(2, 1))},
                     {}, m);
  CHECK(report.interrupted);
  REQUIRE(report.results.size() == 1);  // the second schedule never starts
  CHECK(report.results[0].measured.stop == StopReason::Interrupted);
  CHECK(report.results[0].measured.iteration_us.size() < 1000);
}

TEST_CASE("ranks map to devices in contiguous blocks, unknown ordinals are refused") {
  CHECK(map_ranks_to_devices(8, 1, {}) == std::vector<int>(8, 0));
  CHECK(map_ranks_to_devices(4, 4, {}) == std::vector<int>{0, 1, 2, 3});
  CHECK(map_ranks_to_devices(8, 4, {}) == std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3});
  CHECK(map_ranks_to_devices(4, 8, {6, 7}) == std::vector<int>{6, 6, 7, 7});
  CHECK(map_ranks_to_devices(3, 2, {}) == std::vector<int>{0, 0, 1});
  CHECK_THROWS_WITH(map_ranks_to_devices(4, 2, {0, 2}), Catch::Contains("device 2 is not visible (2 devices)"));
}
