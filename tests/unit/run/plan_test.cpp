// The run plan against the timed simulator: a fake device (CUDA's stream and event semantics,
// each launch taking its expected time) must measure exactly the simulated times, for every
// family, compute-only and lowered, with and without blocking comms. Then the guards: the host
// order check catches what would race on a GPU, and cyclic dependencies are refused.
#include <random>

#include "passes/passes.hpp"
#include "run/engine.hpp"
#include "run/fake_device.hpp"
#include "run/plan.hpp"
#include "sim/timed.hpp"
#include "support/catch.hpp"
#include "synth/synth.hpp"

using namespace ppsched;
using namespace ppsched::run;

namespace {

TimedOptions random_costs(std::uint32_t stages, std::mt19937& rng) {
  std::uniform_real_distribution<double> cost(0.5, 3.0);
  TimedOptions t;
  t.costs.per_stage.resize(stages);
  for (auto& k : t.costs.per_stage) {
    k = unit_costs();
    k[static_cast<int>(ActionKind::F)] = cost(rng);
    k[static_cast<int>(ActionKind::I)] = cost(rng);
    k[static_cast<int>(ActionKind::W)] = cost(rng);
    k[static_cast<int>(ActionKind::B)] = k[static_cast<int>(ActionKind::I)] + k[static_cast<int>(ActionKind::W)];
  }
  return t;
}

Measurement run_once(const RunPlan& plan, FakeDevice& dev) {
  dev.setup(plan.device);
  MeasureOptions m;
  m.warmup = 0;
  m.rule.max_iters = 1;
  return measure(dev, plan, m);
}

}  // namespace

TEST_CASE("a fake run of every family measures exactly what the timed simulator predicts") {
  std::mt19937 rng(7);
  int checked = 0;
  for (const Family& f : families()) {
    SynthParams p{4, 8, 0, false};
    Schedule compute_only;
    try {
      compute_only = synthesize(f.name, p);
    } catch (const SynthError&) {
      continue;  // a family that needs other sizes
    }
    for (bool lowered : {false, true}) {
      for (bool blocking : {false, true}) {
        if (blocking && !lowered) continue;  // blocking is about explicit comms
        Schedule s = lowered ? lower_send_recv(compute_only) : compute_only;
        const auto& placement = s.placement.stage_to_rank;
        TimedOptions sim = random_costs(static_cast<std::uint32_t>(placement.size()), rng);
        sim.blocking_comms = blocking;
        Timeline expected = simulate_timed(s, placement, sim);

        PlanOptions opt;
        opt.workload = Workload::Synthetic;
        opt.costs = sim.costs;
        opt.blocking_comms = blocking;
        RunPlan plan = build_run_plan(s, placement, opt);
        INFO(f.name << (lowered ? " lowered" : " compute-only") << (blocking ? " blocking" : ""));
        REQUIRE(check_host_order(plan).empty());
        FakeDevice dev({});
        Measurement m = run_once(plan, dev);
        CHECK(dev.unrecorded_waits() == 0);
        CHECK(check_measured_order(plan, m, 0).empty());
        CHECK(m.iteration_us.at(0) == Approx(expected.makespan).epsilon(1e-12));
        Timeline got = measured_timeline(plan, m);
        REQUIRE(got.size() == expected.size());
        for (std::size_t e = 0; e < got.size(); ++e) {
          INFO("entry " << e);
          REQUIRE(got.end[e] == Approx(expected.end[e]).epsilon(1e-12));
          if (got.stream[e] == Stream::Compute && !blocking)
            REQUIRE(got.start[e] == Approx(expected.start[e]).epsilon(1e-12));
        }
        ++checked;
      }
    }
  }
  CHECK(checked >= 20);
}

TEST_CASE("the plan waits only on events recorded earlier, and the check catches an order that would race") {
  Schedule s = lower_send_recv(synthesize("1F1B", {4, 4, 0, false}));
  PlanOptions opt;
  opt.workload = Workload::Synthetic;
  opt.costs = CostModel::uniform(4, 1, unit_costs());
  RunPlan plan = build_run_plan(s, s.placement.stage_to_rank, opt);
  REQUIRE(check_host_order(plan).empty());
  REQUIRE(plan.device.event_count > 0);

  // Program order rank by rank instead of the host order: rank 1 would wait on rank 0's events
  // before they are recorded. The check says so, and the fake device (like CUDA) silently races.
  RunPlan by_stream = plan;
  std::stable_sort(by_stream.ops.begin(), by_stream.ops.end(),
                   [](const HostOp& a, const HostOp& b) { return a.stream > b.stream; });
  const std::string problem = check_host_order(by_stream);
  CHECK_THAT(problem, Catch::Contains("before any launch records it"));
  FakeDevice dev({});
  FakeDevice good({});
  Measurement raced = run_once(by_stream, dev);
  Measurement right = run_once(plan, good);
  CHECK(dev.unrecorded_waits() > 0);
  CHECK(good.unrecorded_waits() == 0);
  CHECK(raced.iteration_us[0] < right.iteration_us[0]);
  // And the measured spans give the race away after the fact.
  CHECK(check_measured_order(plan, right, 0).empty());
  CHECK_THAT(check_measured_order(by_stream, raced, 0), Catch::Contains("which it waits for"));
}

TEST_CASE("buffers: the stash lives from F to the last backward piece, received buffers until consumed") {
  Schedule s = lower_send_recv(synthesize("ZBH1", {4, 8, 0, false}));
  PlanOptions opt;
  opt.workload = Workload::Gemm;
  opt.shape = {2, 64, 32, 2};
  opt.costs = CostModel::uniform(4, 1, unit_costs());
  RunPlan plan = build_run_plan(s, s.placement.stage_to_rank, opt);
  REQUIRE(check_host_order(plan).empty());
  std::size_t stashes = 0, boundaries = 0;
  for (const BufferSpec& b : plan.device.buffers) {
    if (b.bytes == opt.shape.stash_bytes()) ++stashes;
    if (b.bytes == opt.shape.boundary_bytes()) ++boundaries;
  }
  CHECK(stashes == 4 * 8);         // one per (stage, microbatch)
  CHECK(boundaries == 2 * 3 * 8);  // one per RECV_F and RECV_B
  for (const HostOp& op : plan.ops) {
    if (op.work.action == ActionKind::F) CHECK(op.work.alloc_count == 1);
    if (op.work.action == ActionKind::I) CHECK(op.work.alloc_count == 0);
    if (op.work.action == ActionKind::W) CHECK(op.work.free_count >= 1);  // frees the stash
  }
  // ZB-H1 on 4 ranks holds at most 4 microbatches' stash on rank 0 (p, the paper's bound).
  std::vector<std::uint64_t> peak = planned_peak_bytes(plan);
  CHECK(peak[0] >= 4 * opt.shape.stash_bytes());
  CHECK(peak[0] < 5 * opt.shape.stash_bytes());
}

TEST_CASE("a schedule whose dependencies form a cycle is refused with the launches that wait") {
  // Rank 0 posts its RECV_B before the SEND_F that stage 1 needs: on one comm queue (NCCL's
  // point-to-point order) the receive holds the send back forever.
  Schedule s;
  s.ranks.resize(2);
  s.num_stages = 2;
  s.num_microbatches = 1;
  s.placement = Placement::loop(2, 2);
  s.ranks[0].actions = {Action::make(ActionKind::F, 0, 0), Action::make(ActionKind::RecvB, 0, 0),
                        Action::make(ActionKind::SendF, 0, 0), Action::make(ActionKind::B, 0, 0)};
  s.ranks[1].actions = {Action::make(ActionKind::RecvF, 1, 0), Action::make(ActionKind::F, 1, 0),
                        Action::make(ActionKind::B, 1, 0), Action::make(ActionKind::SendB, 1, 0)};
  PlanOptions opt;
  for (bool blocking : {false, true}) {
    opt.blocking_comms = blocking;
    CHECK_FALSE(find_stuck(s, s.placement.stage_to_rank, blocking).empty());  // the simulator agrees
    CHECK_THROWS_WITH(build_run_plan(s, s.placement.stage_to_rank, opt),
                      Catch::Contains("deadlocks") && Catch::Contains("'0RECV_B0' on rank 0"));
  }
  std::swap(s.ranks[0].actions[1], s.ranks[0].actions[2]);  // SEND first: it finishes
  CHECK(find_stuck(s, s.placement.stage_to_rank, false).empty());
  CHECK_NOTHROW(build_run_plan(s, s.placement.stage_to_rank, opt));
}
