// run_benchmarks, the library side of `ppsched run`, on the fake device: devices are discovered
// exactly once however many schedules run, and the cost table a run measures, fed back to the
// simulator, predicts the measured iteration within 5% (the loop, here with jitter).
#include <atomic>

#include "ir/user_error.hpp"
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
  BenchmarkReport report = run_benchmarks(
      runtime, {request("1F1B", 2, 4, uneven_costs(2, 1)), request("1F1B", 2, 4, uneven_costs(2, 1))}, {}, m);
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
  CHECK_THROWS_AS(map_ranks_to_devices(4, 2, {0, 2}), UserError);  // the --devices given
}

namespace {

// A fake whose devices say that ranks on one of them take turns on its compute, as a GPU does
// for the GEMM workload. The fake itself still runs every stream as if it had the device alone.
class SharedFakeRuntime : public FakeRuntime {
 public:
  using FakeRuntime::FakeRuntime;
  Discovery discover() override {
    Discovery d = FakeRuntime::discover();
    d.compute_is_shared = true;
    return d;
  }
};

}  // namespace

TEST_CASE("the isolated pass runs a device's launches one at a time and times each kind alone") {
  FakeOptions fo;
  fo.devices = 1;
  FakeDevice device(fo);
  const CostModel truth = uneven_costs(4, 1);
  RunRequest req = request("ZBH1", 4, 8, truth);
  req.plan.device_of_rank.assign(4, 0);
  const RunPlan plan = build_run_plan(req.schedule, req.stage_to_rank, req.plan);
  device.setup(plan.device);
  const std::vector<KindTiming> alone = measure_isolated(device, plan, 3);
  // Every kind of every stage, at exactly its cost (no jitter).
  std::size_t compute = 0;
  for (const KindTiming& k : alone) {
    if (!is_compute(k.kind)) continue;
    ++compute;
    CHECK(k.stats.count == 2 * 8);  // two timed iterations, eight microbatches
    CHECK(k.stats.median == Approx(truth.cost(static_cast<std::uint16_t>(k.stage), k.kind)));
  }
  CHECK(compute == 4 * 3);  // F, I, W on four stages
  // The normal pass overlaps the streams: shorter than all the launches together.
  MeasureOptions once;
  once.warmup = 0;
  once.rule.max_iters = 1;
  const Measurement in_run = measure(device, plan, once);
  double total = 0;
  for (std::uint32_t s = 0; s < 4; ++s)
    for (ActionKind k : {ActionKind::F, ActionKind::I, ActionKind::W})
      total += 8 * truth.cost(static_cast<std::uint16_t>(s), k);
  CHECK(in_run.iteration.median < total);
  measure_isolated(device, plan, 1);  // leaves the device usable for the next schedule
  CHECK(measure(device, plan, once).iteration.median == Approx(in_run.iteration.median));
}

TEST_CASE("where ranks share a device's compute, run predicts with the isolated costs and the ranks taking turns") {
  SharedFakeRuntime runtime({1, 0.0, 5});
  const CostModel truth = uneven_costs(4, 1);
  RunRequest gemm = request("1F1B", 4, 8, truth);
  gemm.plan.workload = Workload::Gemm;
  gemm.predict_from_measurement = true;
  RunRequest spin = request("1F1B", 4, 8, truth);  // one-thread kernels do not contend
  BenchmarkReport report = run_benchmarks(runtime, {gemm, spin}, {}, quick());
  REQUIRE(report.results.size() == 2);
  const RunResult& shared = report.results[0];
  CHECK(shared.shared_compute);
  REQUIRE_FALSE(shared.isolated.empty());
  CHECK(&shared.cost_kinds() == &shared.isolated);
  // The prediction is the simulator given the isolated costs, the four ranks on one device.
  TimedOptions sim;
  sim.costs = CostModel::uniform(4, 1, unit_costs());
  DiagnosticSink sink;
  REQUIRE(read_cost_text("isolated.csv", cost_table_csv(measured_costs(shared.cost_kinds())), sim.costs, sink));
  sim.device_of_rank = {0, 0, 0, 0};
  const Schedule& s = shared.schedule;
  CHECK(shared.simulated_us == Approx(simulate_timed(s, s.placement.stage_to_rank, sim).makespan));
  // All the work, one action at a time: F = 100..130, B = 200..260 over the four stages.
  double work = 0;
  for (std::uint32_t st = 0; st < 4; ++st)
    work += 8 * (truth.cost(static_cast<std::uint16_t>(st), ActionKind::F) +
                 truth.cost(static_cast<std::uint16_t>(st), ActionKind::B));
  CHECK(shared.simulated_us == Approx(work));
  const RunResult& spun = report.results[1];
  CHECK_FALSE(spun.shared_compute);
  CHECK(spun.isolated.empty());
  CHECK(spun.ratio() == Approx(1.0).epsilon(0.01));
}
