// The megatron runtime model (sim/megatron.hpp) on cases small enough to time by hand, its choice of
// executor, and what it refuses.
#include "sim/megatron.hpp"

#include "ir/user_error.hpp"
#include "passes/passes.hpp"
#include "support/catch.hpp"
#include "synth/synth.hpp"

using namespace ppsched;

namespace {

// Two ranks on one node: a transfer takes 0.5 (latency only: no stage spec, no bytes); per rank
// F = 1, I = 1.5, W = 0.5, B = 2; each p2p call costs the compute stream 0.1.
TimedOptions two_ranks() {
  TimedOptions opt;
  KindCosts c = unit_costs();
  c[static_cast<std::size_t>(ActionKind::F)] = 1;
  c[static_cast<std::size_t>(ActionKind::I)] = 1.5;
  c[static_cast<std::size_t>(ActionKind::W)] = 0.5;
  c[static_cast<std::size_t>(ActionKind::B)] = 2;
  opt.costs = CostModel::uniform(2, 1, c);
  Topology t;
  t.node_of_rank = {0, 0};
  t.slice_of_rank = {0, 0};
  t.intra_node = {0.5, 0};
  opt.comm.topology = t;
  return opt;
}

// GPipe as PyTorch writes it ends each rank with REDUCE_GRAD; left out, each rank runs F then B.
Schedule gpipe_2x1() { return strip_kind(synthesize("GPipe", {2, 1}), ActionKind::ReduceGrad); }

RuntimeParams overhead(double us) {
  RuntimeParams p;
  p.p2p_call_overhead_us = us;
  return p;
}

}  // namespace

TEST_CASE("megatron: the synchronous path waits for each call, then pays its overhead") {
  // GPipe, 2 ranks, 1 microbatch: rank 0 F [0,1], then one call {send F, receive B's gradient}
  // issued at 1 and waited for. Rank 1 receives the activation at max(1, 0) + 0.5 = 1.5, +0.1:
  // F [1.6,2.6], B [2.6,4.6], then a call {send the gradient} issued at 4.6: it lands at 5.1, so
  // rank 0 resumes at 5.1 + 0.1 and runs B [5.2,7.2].
  const Schedule s = gpipe_2x1();
  REQUIRE(megatron_path(s, Optimizer::Sync) == MegatronPath::Synchronous);
  const Timeline t = simulate_megatron(s, s.placement.stage_to_rank, two_ranks(), overhead(0.1), Optimizer::Sync);
  REQUIRE(t.size() == 4);
  CHECK(t.start[0] == 0);
  CHECK(t.end[0] == 1);
  CHECK(t.start[1] == Approx(5.2));
  CHECK(t.start[2] == Approx(1.6));
  CHECK(t.start[3] == Approx(2.6));
  CHECK(t.makespan == Approx(7.2));
  // Rank 0's backward was released by rank 1's backward (the gradient it waited for).
  CHECK(t.released_by[1] == 3);
}

TEST_CASE("megatron: the Zero Bubble runtime issues calls without waiting, compute waits for its data") {
  // The same schedule under a post-validated optimizer runs on the Zero Bubble runtime, which posts
  // each receive one compute action before its consumer's: rank 0's first call (at 0, then 0.1 of
  // overhead) already holds the receive of B's gradient, so F runs [0.1,1.1]; its next call sends
  // the activation at 1.1, which lands at 1.6. Rank 1 runs F [1.6,2.6] and B [2.6,4.6] and sends
  // the gradient at 4.6, which lands at 5.1: rank 0's B [5.1,7.1].
  const Schedule s = gpipe_2x1();
  REQUIRE(megatron_path(s, Optimizer::PostValidated) == MegatronPath::ZeroBubbleRuntime);
  const Timeline t =
      simulate_megatron(s, s.placement.stage_to_rank, two_ranks(), overhead(0.1), Optimizer::PostValidated);
  CHECK(t.start[0] == Approx(0.1));
  CHECK(t.start[2] == Approx(1.6));
  CHECK(t.start[3] == Approx(2.6));
  CHECK(t.start[1] == Approx(5.1));
  CHECK(t.makespan == Approx(7.1));
  // Without the overhead the transfers alone remain.
  const Timeline bare =
      simulate_megatron(s, s.placement.stage_to_rank, two_ranks(), overhead(0), Optimizer::PostValidated);
  CHECK(bare.makespan == Approx(7.0));
}

TEST_CASE("megatron: an asynchronous call in flight holds SMs and slows the rank's compute, a synchronous one never") {
  // 27 of the A100's 108 SMs: compute runs at 3/4 of its speed while a call of its rank is in
  // flight. Rank 0's F starts at 0.1 with the gradient's receive posted and not yet matched: it
  // runs slowed, 1 / 0.75, to 1.4333; the activation leaves then and lands at 1.9333,
  // when rank 1's only call has completed: its F [1.9333,2.9333] and B [2.9333,4.9333] run at full
  // speed. The gradient lands at 5.4333, completing rank 0's last call before its B: [5.4333,7.4333].
  const Schedule s = gpipe_2x1();
  RuntimeParams p = overhead(0.1);
  p.p2p_kernel_sms = 27;
  p.gpu = "a100";
  const Timeline t = simulate_megatron(s, s.placement.stage_to_rank, two_ranks(), p, Optimizer::PostValidated);
  CHECK(t.end[0] == Approx(0.1 + 1 / 0.75));
  CHECK(t.start[2] == Approx(0.1 + 1 / 0.75 + 0.5));  // 1.9333
  CHECK(t.end[2] - t.start[2] == Approx(1));
  CHECK(t.start[1] == Approx(t.end[3] + 0.5));  // sent as B ends: 5.4333
  CHECK(t.end[1] - t.start[1] == Approx(2));
  // The synchronous executor waits for every call before it computes: nothing overlaps.
  const Timeline sync = simulate_megatron(s, s.placement.stage_to_rank, two_ranks(), p, Optimizer::Sync);
  CHECK(sync.makespan == Approx(7.2));
  // A share of SMs needs the device: an unknown one is refused.
  p.gpu = "nope";
  CHECK_THROWS_AS(simulate_megatron(s, s.placement.stage_to_rank, two_ranks(), p, Optimizer::PostValidated), UserError);
}

TEST_CASE("megatron: a split backward runs on the Zero Bubble runtime even under a sync optimizer") {
  CHECK(megatron_path(synthesize("ZBH1", {4, 8}), Optimizer::Sync) == MegatronPath::ZeroBubbleRuntime);
  CHECK(megatron_path(synthesize("1F1B", {4, 8}), Optimizer::Sync) == MegatronPath::Synchronous);
  CHECK(megatron_path(synthesize("Interleaved1F1B", {4, 8, 2}), Optimizer::Sync) == MegatronPath::Synchronous);
  CHECK(megatron_path(synthesize("1F1B", {4, 8}), Optimizer::PostValidated) == MegatronPath::ZeroBubbleRuntime);
}

TEST_CASE("megatron: interleaved steps share one call, so each call's overhead is paid once per pair") {
  // Interleaved 1F1B, 2 ranks x 2 stages, 4 microbatches: the overhead adds less than one call per
  // compute action would cost on the busiest rank.
  const Schedule s = synthesize("Interleaved1F1B", {2, 4, 2});
  TimedOptions opt = two_ranks();
  opt.costs = CostModel::uniform(4, 2, unit_costs());
  const double base = simulate_megatron(s, s.placement.stage_to_rank, opt, overhead(0), Optimizer::Sync).makespan;
  const double with = simulate_megatron(s, s.placement.stage_to_rank, opt, overhead(1), Optimizer::Sync).makespan;
  const std::size_t computes = s.ranks[0].actions.size();  // 16 on each rank
  CHECK(with > base);
  CHECK(with - base < double(computes));
}

TEST_CASE("megatron: a schedule that cannot finish is a deadlock naming the stuck ranks") {
  Schedule s = gpipe_2x1();
  std::swap(s.ranks[1].actions[0], s.ranks[1].actions[1]);  // rank 1: B before its own F
  try {
    simulate_megatron(s, s.placement.stage_to_rank, two_ranks(), overhead(0.1), Optimizer::Sync);
    FAIL("no deadlock reported");
  } catch (const TimedDeadlock& d) {
    REQUIRE(d.stuck().size() == 2);
    CHECK(d.stuck()[0].rank == 0);
    CHECK(d.stuck()[1].rank == 1);
    CHECK(d.stuck()[1].waiting_for == "an action later in its own program");
  }
}

TEST_CASE("megatron: SEND and RECV are Megatron's to place, schedule_as_run leaves them out") {
  const Schedule compute = synthesize("1F1B", {2, 4});
  const Schedule lowered = lower_send_recv(compute);
  REQUIRE(has_comms(lowered));
  CHECK_THROWS_AS(
      simulate_megatron(lowered, lowered.placement.stage_to_rank, two_ranks(), overhead(0.1), Optimizer::Sync),
      UserError);
  const Schedule run = schedule_as_run(lowered, Runtime::Megatron);
  CHECK_FALSE(has_comms(run));
  CHECK(simulate_megatron(run, run.placement.stage_to_rank, two_ranks(), overhead(0.1), Optimizer::Sync).makespan ==
        simulate_megatron(compute, compute.placement.stage_to_rank, two_ranks(), overhead(0.1), Optimizer::Sync)
            .makespan);
}

TEST_CASE("iteration time: the makespan under sync, the longest rank span under post-validated") {
  const Schedule s = gpipe_2x1();
  const RuntimeModel sync{Runtime::Megatron, Optimizer::Sync, overhead(0.1)};
  const SimAnalysis a = simulate_runtime(s, s.placement.stage_to_rank, two_ranks(), MemoryModel{}, sync);
  CHECK(iteration_time(a, Optimizer::Sync) == Approx(7.2));
  // Rank 0 spans [0, 7.2]; rank 1 [1.6, 4.6].
  CHECK(iteration_time(a, Optimizer::PostValidated) == Approx(7.2));
  SimAnalysis shifted = a;
  shifted.ranks[0].first_start = 3;
  CHECK(iteration_time(shifted, Optimizer::PostValidated) == Approx(4.2));
}
