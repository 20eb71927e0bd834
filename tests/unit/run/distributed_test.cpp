// The multi-process engine (run/distributed.hpp) with threads for processes (support/
// thread_group.hpp): placing ranks, the per-process plan, and the claim the whole design rests
// on: a fake run split over processes times exactly what one process running every rank times.
#include <algorithm>
#include <chrono>

#include "ir/user_error.hpp"
#include "passes/passes.hpp"
#include "run/benchmark.hpp"
#include "run/distributed.hpp"
#include "run/fake_device.hpp"
#include "support/catch.hpp"
#include "support/thread_group.hpp"
#include "synth/synth.hpp"

using namespace ppsched;
using namespace ppsched::run;

namespace {

RunRequest request(const char* family, std::uint32_t ranks, std::uint32_t mbs) {
  RunRequest r;
  r.name = family;
  r.schedule = lower_send_recv(synthesize(family, {ranks, mbs, 0, false}));
  r.stage_to_rank = r.schedule.placement.stage_to_rank;
  const auto stages = static_cast<std::uint32_t>(r.stage_to_rank.size());
  KindCosts k = unit_costs();
  k[static_cast<int>(ActionKind::F)] = 100;
  k[static_cast<int>(ActionKind::I)] = 120;
  k[static_cast<int>(ActionKind::W)] = 80;
  k[static_cast<int>(ActionKind::B)] = 200;
  CostModel c = CostModel::uniform(stages, stages / ranks, k);
  for (std::uint32_t s = 0; s < stages; ++s)
    for (double& v : c.per_stage[s]) v *= 1.0 + 0.1 * s;  // later stages are heavier
  r.plan.workload = Workload::Synthetic;
  r.plan.costs = c;
  r.plan.activation_bytes = 4096;
  // Transfers take time too: 20 us each way.
  Topology t;
  t.node_of_rank.assign(ranks, 0);
  t.slice_of_rank.assign(ranks, 0);
  t.intra_node = {20, 0};
  r.plan.comm.topology = t;
  r.sim.costs = c;
  r.sim.comm = r.plan.comm;
  return r;
}

MeasureOptions quick() {
  MeasureOptions m;
  m.warmup = 2;
  m.rule.max_iters = 12;
  return m;
}

DistributedOptions distributed(const CountingRuntime& counting) {
  DistributedOptions d;
  d.timeout_s = 20;
  d.ping_repeats = 3;
  d.discoveries = [&] { return counting.discoveries(); };
  d.opens = [&] { return counting.opens(); };
  return d;
}

// A device plan of two ranks, one per process, with one launch on `stream`.
DevicePlan two_process_plan(std::vector<std::string> labels, std::uint32_t stream) {
  DevicePlan plan;
  plan.workload = Workload::Synthetic;
  plan.device_of_rank = {0, 0};
  plan.process_of_rank = {0, 1};
  plan.rank_of_stage = {0, 1};
  plan.span_count = 1;
  plan.span_stream = {stream};
  plan.labels = std::move(labels);
  return plan;
}

}  // namespace

TEST_CASE("ranks go to processes one to one, by --rank-map or in order") {
  CHECK(place_ranks(4, 4, {}) == std::vector<std::int32_t>{0, 1, 2, 3});
  CHECK(place_ranks(2, 4, {3, 1}) == std::vector<std::int32_t>{3, 1});
  CHECK_THROWS_WITH(place_ranks(4, 3, {}), Catch::Contains("4 ranks but the launcher started 3 processes"));
  CHECK_THROWS_WITH(place_ranks(2, 4, {1, 1}), Catch::Contains("ranks 0 and 1 on process 1"));
  CHECK_THROWS_WITH(place_ranks(2, 4, {0, 4}), Catch::Contains("processes 0 to 3"));
  CHECK_THROWS_WITH(place_ranks(2, 4, {0}), Catch::Contains("lists 1 process,"));
  CHECK_THROWS_AS(place_ranks(2, 4, {0}), UserError);  // the --rank-map given, a usage error
}

TEST_CASE("a process's plan keeps its rank's launches, turns transfers into Send/SendDone/Recv, and is safe") {
  const RunRequest req = request("1F1B", 2, 4);
  const RunPlan global = build_run_plan(req.schedule, req.stage_to_rank, req.plan);
  for (int me : {0, 1}) {
    const RunPlan local = localize_plan(global, me, {0, 1});
    CHECK(check_host_order(local).empty());
    std::size_t sends = 0, dones = 0, recvs = 0;
    for (const HostOp& op : local.ops) {
      CHECK(rank_of_stream(op.stream) == static_cast<std::uint32_t>(me));
      sends += op.work.kind == WorkKind::Send;
      dones += op.work.kind == WorkKind::SendDone;
      recvs += op.work.kind == WorkKind::Recv;
      if (op.work.kind == WorkKind::Send || op.work.kind == WorkKind::Recv) {
        CHECK(op.work.peer == static_cast<std::uint32_t>(1 - me));
        CHECK(op.work.copy_bytes == 4096);
      }
    }
    // Rank 0 sends 4 activations and receives 4 gradients; rank 1 the other way round.
    CHECK(sends == 4);
    CHECK(dones == 4);
    CHECK(recvs == 4);
  }
}

TEST_CASE("a compute-only schedule cannot be split over processes: it says how to lower it") {
  RunRequest req = request("1F1B", 2, 4);
  req.schedule = synthesize("1F1B", {2, 4, 0, false});
  const RunPlan global = build_run_plan(req.schedule, req.stage_to_rank, req.plan);
  CHECK_THROWS_WITH(localize_plan(global, 1, {0, 1}), Catch::Contains("--lower send-recv"));
}

TEST_CASE("a fake run over four processes times exactly what one process running every rank times") {
  for (const char* family : {"1F1B", "ZBVZeroBubble", "DualPipeV"}) {
    DYNAMIC_SECTION(family) {
      const RunRequest req = request(family, 4, 8);
      FakeRuntime single({1, 0.05, 7});
      const BenchmarkReport alone = run_benchmarks(single, {req}, {}, quick());
      REQUIRE(alone.results.size() == 1);

      test::ThreadWorld world(4);
      BenchmarkReport together;
      test::run_processes(world, [&](run::ProcessGroup& group) {
        FakeRuntime fake({2, 0.05, 7});  // two devices per node: processes take local rank mod 2
        CountingRuntime counting(fake);
        BenchmarkReport r = run_distributed(counting, group, {req}, distributed(counting), quick());
        if (group.rank() == 0) together = std::move(r);
      });
      REQUIRE(together.results.size() == 1);
      const Measurement& a = alone.results[0].measured;
      const Measurement& b = together.results[0].measured;
      CHECK(b.iteration_us == a.iteration_us);  // every iteration, jitter included
      CHECK(b.last_start_us == a.last_start_us);
      CHECK(b.last_end_us == a.last_end_us);
      CHECK(together.results[0].simulated_us == alone.results[0].simulated_us);
      REQUIRE(b.kinds.size() == a.kinds.size());
      for (std::size_t i = 0; i < a.kinds.size(); ++i) CHECK(b.kinds[i].stats.median == a.kinds[i].stats.median);
      // One row per process: each ran its rank, discovered and opened its device once.
      REQUIRE(together.processes.size() == 4);
      for (const ProcessRow& row : together.processes) {
        CHECK(row.rank == row.process);
        CHECK(row.ordinal == row.process % 2);
        CHECK(row.discoveries == 1);
        CHECK(row.opens == 1);
      }
      // Each process's memory is its own rank's: the same as one process measures per rank.
      REQUIRE(b.memory.peak_buffer_bytes.size() == 4);
      CHECK(b.memory.peak_buffer_bytes[3] > 0);
      REQUIRE(together.links.size() == 1);
      CHECK(together.links[0].link == "intra_node");
      CHECK(together.launcher == "threads");
      REQUIRE(together.measured_topology);
      CHECK(together.measured_topology->node_of_rank == std::vector<std::uint32_t>{0, 0, 0, 0});
    }
  }
}

TEST_CASE("a rank map places ranks on chosen processes, and the other processes join but run nothing") {
  const RunRequest req = request("1F1B", 2, 4);
  test::ThreadWorld world(4, {0, 0, 1, 1});
  BenchmarkReport together;
  test::run_processes(world, [&](run::ProcessGroup& group) {
    FakeRuntime fake({1, 0, 1});
    CountingRuntime counting(fake);
    DistributedOptions d = distributed(counting);
    d.rank_map = {0, 2};  // across the two nodes
    BenchmarkReport r = run_distributed(counting, group, {req}, d, quick());
    if (group.rank() == 0) together = std::move(r);
  });
  REQUIRE(together.results.size() == 1);
  CHECK(together.processes[2].rank == 1);
  CHECK(together.processes[1].rank == -1);
  CHECK(together.processes[3].place.local_rank == 1);
  REQUIRE(together.links.size() == 2);
  CHECK(together.links[1].link == "inter_node");
  CHECK(together.links[1].to == 2);
  REQUIRE(together.measured_topology);
  CHECK(together.measured_topology->node_of_rank == std::vector<std::uint32_t>{0, 1});
  FakeRuntime single({1, 0, 1});
  CHECK(together.results[0].measured.iteration.median ==
        run_benchmarks(single, {req}, {}, quick()).results[0].measured.iteration.median);
}

TEST_CASE("transfers the two ranks order differently are named, not silently matched") {
  // Rank 0 sends microbatch 1 first; rank 1 expects microbatch 0.
  const DevicePlan plan = two_process_plan({"0SEND_F1", "1RECV_F0"}, 0);
  test::ThreadWorld world(2);
  CHECK_THROWS_WITH(
      test::run_processes(world,
                          [&](run::ProcessGroup& group) {
                            FakeRuntime fake({1, 0, 1});
                            const Discovery d = fake.discover();
                            auto device = fake.open_member(d, {&group, 0, {}, 5});
                            DevicePlan mine = plan;
                            mine.process = group.rank();
                            device->setup(mine);
                            device->begin_iteration();
                            Work w;
                            w.copy_bytes = 64;
                            if (group.rank() == 0) {
                              w.kind = WorkKind::Send, w.action = ActionKind::SendF, w.rank = 0, w.stage = 0;
                              w.microbatch = 1, w.peer = 1, w.label = 0;
                            } else {
                              w.kind = WorkKind::Recv, w.action = ActionKind::RecvF, w.rank = 1, w.stage = 1;
                              w.microbatch = 0, w.peer = 0, w.label = 1;
                            }
                            device->launch(1, w, 0);
                          }),
      Catch::Contains("expected rank 0's SEND_F of stage 0, microbatch 0") &&
          Catch::Contains("is SEND_F of stage 0, microbatch 1"));
}

TEST_CASE("a receive whose sender never sends fails within the timeout, naming the rank and the launch") {
  const DevicePlan plan = two_process_plan({"1RECV_F0"}, stream_of(1));
  test::ThreadWorld world(2);
  const auto began = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(
      test::run_processes(world,
                          [&](run::ProcessGroup& group) {
                            if (group.rank() == 0) return;  // process 0 has died
                            FakeRuntime fake({1, 0, 1});
                            auto device = fake.open_member(fake.discover(), {&group, 0, {}, 0.2});
                            DevicePlan mine = plan;
                            mine.process = 1;
                            device->setup(mine);
                            device->begin_iteration();
                            Work w;
                            w.kind = WorkKind::Recv, w.action = ActionKind::RecvF, w.rank = 1, w.stage = 1, w.peer = 0;
                            device->launch(stream_of(1, 1), w, 0);
                          }),
      Catch::Contains("rank 1 ('1RECV_F0') waited for rank 0's send") && Catch::Contains("no message from process 0"));
  CHECK(std::chrono::steady_clock::now() - began < std::chrono::seconds(5));
}
