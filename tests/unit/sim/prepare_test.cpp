// Preparing a schedule for what runs it (sim/prepare.hpp): each runner's step against the passes
// it stands for, the order of --lower and the runner's step, the keywords' checks, and where a
// rejected schedule is reported.
#include "sim/prepare.hpp"

#include "ir/user_error.hpp"
#include "passes/passes.hpp"
#include "support/catch.hpp"
#include "synth/synth.hpp"

using namespace ppsched;

namespace {

Preparation runner(Runner r, Runtime runtime = Runtime::PyTorch, Lowering lower = Lowering::None) {
  Preparation p;
  p.runner = r;
  p.runtime = runtime;
  p.lower = lower;
  return p;
}

// Two ranks, one microbatch, rank 0 running its backward before its forward: the backward waits
// for a gradient that needs the forward first, so PyTorch's passes get stuck at rank 0's step 0.
Schedule backward_first() {
  Schedule s;
  s.ranks.resize(2);
  s.num_stages = 2;
  s.num_microbatches = 1;
  s.ranks[0].actions = {Action::make(ActionKind::B, 0, 0), Action::make(ActionKind::F, 0, 0)};
  s.ranks[1].actions = {Action::make(ActionKind::F, 1, 0), Action::make(ActionKind::B, 1, 0)};
  return s;
}

}  // namespace

TEST_CASE("prepare: nothing to do leaves the schedule as given, uncopied") {
  const Schedule zbv = synthesize("ZBV", {4, 8});
  for (const Preparation& how : {runner(Runner::AsLowered), runner(Runner::Runtime, Runtime::Ideal)}) {
    PreparedSchedule p = prepare_schedule(zbv, {}, how);
    CHECK_FALSE(p.lowered);
    CHECK(same_schedule(p.as_run(), zbv));
    CHECK_FALSE(p.dropped_comms);
  }
}

TEST_CASE("prepare: the pytorch runtime lowers a compute-only schedule with the keywords given") {
  const Schedule zbv = synthesize("ZBV", {4, 8});
  Preparation how = runner(Runner::Runtime, Runtime::PyTorch);
  how.keywords.values = RuntimeLowering{1, true};
  how.keywords.defer_pp_recv_given = how.keywords.max_active_stages_given = true;
  const PreparedSchedule p = prepare_schedule(zbv, {}, how);
  REQUIRE(p.lowered);
  CHECK(same_schedule(p.as_run(), lower_runtime_recipe(zbv, RuntimeLowering{1, true})));
  CHECK_FALSE(same_schedule(p.as_run(), lower_runtime_recipe(zbv)));  // the keywords changed the order
  CHECK(same_schedule(p.given, zbv));
}

TEST_CASE("prepare: --lower comes first, and a schedule with comms is not lowered again") {
  const Schedule zbv = synthesize("ZBV", {4, 8});
  const PreparedSchedule p = prepare_schedule(zbv, {}, runner(Runner::Runtime, Runtime::PyTorch, Lowering::SendRecv));
  CHECK(same_schedule(p.as_run(), lower_send_recv(zbv)));
  // merge-bw leaves a compute-only schedule, which the runtime then lowers.
  const Schedule zb1 = synthesize("ZBH1", {4, 8});
  const PreparedSchedule merged =
      prepare_schedule(zb1, {}, runner(Runner::Runtime, Runtime::PyTorch, Lowering::MergeBw));
  CHECK(same_schedule(merged.as_run(), lower_runtime_recipe(merge_bw(zb1))));
}

TEST_CASE("prepare: megatron drops SEND and RECV and says so, the lock-step dry run adds them") {
  const Schedule zbv = synthesize("ZBV", {4, 8});
  const PreparedSchedule m = prepare_schedule(zbv, {}, runner(Runner::Runtime, Runtime::Megatron, Lowering::SendRecv));
  CHECK(m.dropped_comms);
  CHECK_FALSE(has_comms(m.as_run()));
  const PreparedSchedule plain = prepare_schedule(zbv, {}, runner(Runner::Runtime, Runtime::Megatron));
  CHECK_FALSE(plain.dropped_comms);
  CHECK_FALSE(plain.lowered);
  const PreparedSchedule steps = prepare_schedule(zbv, {}, runner(Runner::LockStep));
  CHECK(same_schedule(steps.as_run(), lower_send_recv(zbv)));
}

TEST_CASE("prepare: a rejected schedule names the step and keeps what that step was given") {
  const Schedule bad = backward_first();
  try {
    (void)prepare_schedule(bad, {}, runner(Runner::AsLowered, Runtime::PyTorch, Lowering::SendRecv));
    FAIL("the send/recv lowering accepted a backward before its forward");
  } catch (const PreparationError& e) {
    CHECK(e.step() == PreparationError::Step::Lower);
    CHECK(e.lower() == Lowering::SendRecv);
    CHECK(same_schedule(e.input(), bad));
    REQUIRE_FALSE(e.stuck().empty());
    CHECK(e.stuck().front().rank == 0);
  }
  try {
    (void)prepare_schedule(bad, {}, runner(Runner::LockStep));
    FAIL("the lock-step dry run's lowering accepted a backward before its forward");
  } catch (const PreparationError& e) {
    CHECK(e.step() == PreparationError::Step::LockStep);
    CHECK(same_schedule(e.input(), bad));
  }
  CHECK_THROWS_AS(prepare_schedule(bad, {}, runner(Runner::Runtime)), PreparationError);
}

TEST_CASE("prepare: keywords where PyTorch would not take them are a user error") {
  Preparation how = runner(Runner::Runtime, Runtime::PyTorch);
  how.check_keywords();  // none given: nothing to refuse
  how.keywords.defer_pp_recv_given = true;
  how.check_keywords();  // a file, under the pytorch runtime
  how.family = "1F1B";
  CHECK_THROWS_WITH(how.check_keywords(), Catch::Contains("Schedule1F1B.__init__() got an unexpected keyword "
                                                          "argument 'defer_pp_recv'"));
  how.family = "GPipe";
  CHECK_THROWS_AS(how.check_keywords(), UserError);
  how.family = "ZBV";
  how.old_pytorch = true;
  CHECK_THROWS_WITH(how.check_keywords(), Catch::Contains("00722e64"));
  Preparation nothing_lowers = runner(Runner::Runtime, Runtime::Ideal);
  nothing_lowers.keywords.max_active_stages_given = true;
  CHECK_THROWS_WITH(nothing_lowers.check_keywords(), Catch::Contains("--max-active-stages"));
  nothing_lowers.lower = Lowering::Runtime;
  nothing_lowers.check_keywords();
}

TEST_CASE("prepare: what a synthesis's size budget counts as lowered") {
  CHECK_FALSE(runner(Runner::AsLowered).lowers_compute_only());
  CHECK_FALSE(runner(Runner::Runtime, Runtime::Ideal).lowers_compute_only());
  CHECK_FALSE(runner(Runner::Runtime, Runtime::Megatron).lowers_compute_only());
  CHECK(runner(Runner::Runtime, Runtime::PyTorch).lowers_compute_only());
  CHECK(runner(Runner::AsLowered, Runtime::PyTorch, Lowering::SendRecv).lowers_compute_only());
}

TEST_CASE("prepare: taking what runs frees the rest") {
  const Schedule zbv = synthesize("ZBV", {4, 8});
  PreparedSchedule p = prepare_schedule(zbv, {}, runner(Runner::LockStep));
  const Schedule run = std::move(p).take_as_run();
  CHECK(same_schedule(run, lower_send_recv(zbv)));
  CHECK(p.given.ranks.empty());
  CHECK_FALSE(p.lowered);
  for (Lowering l : {Lowering::None, Lowering::SendRecv, Lowering::Runtime, Lowering::MergeBw})
    CHECK(lowering_from_name(lowering_name(l)) == l);
  CHECK_FALSE(lowering_from_name("send_recv"));
}
