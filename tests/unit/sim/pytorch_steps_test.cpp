// simulate_pytorch_steps on small hand-made schedules, with the exact timelines PyTorch's
// `_simulate_comms_compute` gives (worked out step by step in the comments).
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ir/user_error.hpp"
#include "sim/pytorch_steps.hpp"
#include "support/catch.hpp"
#include "support/schedule_text.hpp"

using namespace ppsched;

namespace {

// Parses leniently: PyTorch's reading of cells such as `(0F0)F`.
Schedule from_csv(std::string_view text) { return test::schedule_from_csv(text, /*lenient=*/true); }

using test::csv_text;

std::string simulated(std::string_view text, const std::vector<std::uint32_t>& stage_to_rank,
                      std::uint32_t num_stages) {
  return csv_text(simulate_pytorch_steps(from_csv(text), stage_to_rank, num_stages));
}

struct DeadlockSeen {
  std::string partial;
  std::vector<SimDeadlock::Stuck> stuck;
  std::string message;
};

DeadlockSeen deadlock(std::string_view text, const std::vector<std::uint32_t>& stage_to_rank,
                      std::uint32_t num_stages) {
  try {
    simulate_pytorch_steps(from_csv(text), stage_to_rank, num_stages);
  } catch (const SimDeadlock& e) {
    return {csv_text(e.partial()), e.stuck(), e.what()};
  }
  FAIL("no deadlock");
  return {};
}

std::string invalid(std::string_view text, const std::vector<std::uint32_t>& stage_to_rank, std::uint32_t num_stages) {
  try {
    simulate_pytorch_steps(from_csv(text), stage_to_rank, num_stages);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("pytorch_steps: GPipe with 2 ranks and 2 microbatches, PyTorch's grid") {
  // The manifest's simulate_send_recv grid for gpipe_r2_s1_m2 (10 steps). At step 6 rank 1 runs
  // 1SEND_B0 after rank 0 has idled: the second pass gives rank 0 the slot for 0RECV_B0.
  CHECK(simulated("0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n"
                  "1RECV_F0,1F0,1RECV_F1,1F1,1B0,1SEND_B0,1B1,1SEND_B1\n",
                  {0, 1}, 2) ==
        "0F0,0SEND_F0,0F1,0SEND_F1,,,0RECV_B0,0B0,0RECV_B1,0B1\n"
        ",1RECV_F0,1F0,1RECV_F1,1F1,1B0,1SEND_B0,1B1,1SEND_B1\n");
}

TEST_CASE("pytorch_steps: a RECV runs in the same step as its SEND from a higher rank (second pass)") {
  // Step 0: rank 0 waits for 1SEND_B0; rank 1 runs 1B0 (last stage: always ready).
  // Step 1: rank 0 still waits in the first pass; rank 1 runs 1SEND_B0 and finishes; in the
  // second pass rank 0's 0RECV_B0 is ready and takes step 1's slot.
  CHECK(simulated("0RECV_B0\n1B0,1SEND_B0\n", {0, 1}, 2) == ",0RECV_B0\n1B0,1SEND_B0\n");
}

TEST_CASE("pytorch_steps: a RECV runs in the same step as its SEND from a lower rank (first pass)") {
  // Rank 0's 0SEND_F0 counts as done at once, so rank 1, visited next, runs 1RECV_F0 in step 1.
  CHECK(simulated("0F0,0SEND_F0\n1RECV_F0,1F0\n", {0, 1}, 2) == "0F0,0SEND_F0\n,1RECV_F0,1F0\n");
}

TEST_CASE("pytorch_steps: idle steps of the input are dropped, finished ranks stop") {
  CHECK(simulated(",,0F0,,0SEND_F0,\n1RECV_F0,,1F0,,,\n", {0, 1}, 2) == "0F0,0SEND_F0\n,1RECV_F0,1F0\n");
  // A rank with no actions has an empty timeline (a blank line).
  CHECK(simulated("0F0\n\n", {0, 1}, 2) == "0F0\n\n");
}

TEST_CASE("pytorch_steps: W is always ready") {
  // PyTorch does not check that the W's I ran: 0W0 runs at step 0, before 0I0.
  CHECK(simulated("0W0,0I0\n", {0}, 1) == "0W0,0I0\n");
  // A W does not wait for the gradient from the next stage, while its I does.
  CHECK(simulated("0F0,0SEND_F0,0W0,0RECV_B0,0I0\n1RECV_F0,1F0,1I0,1SEND_B0,1W0\n", {0, 1}, 2) ==
        "0F0,0SEND_F0,0W0,,0RECV_B0,0I0\n"
        ",1RECV_F0,1F0,1I0,1SEND_B0,1W0\n");
}

TEST_CASE("pytorch_steps: the last stage's backward and stage 0's forward are always ready") {
  // 1B0 runs before any 1F0 (only _validate_schedule would object).
  CHECK(simulated("0F0\n1B0,1SEND_B0\n", {0, 1}, 2) == "0F0\n1B0,1SEND_B0\n");
}

TEST_CASE("pytorch_steps: readiness looks in the done-set of the rank that owns the stage") {
  // 1F0 on rank 0 needs (0F0 or 1RECV_F0) done on stage 1's owner. With stage 1 on rank 0 it runs.
  CHECK(simulated("0F0,1F0\n", {0, 0}, 2) == "0F0,1F0\n");
  // With stage 1 on rank 1 (which ran nothing), rank 0's 0F0 is invisible to it: deadlock.
  auto d = deadlock("0F0,1F0\n\n", {0, 1}, 2);
  CHECK(d.partial == "0F0,\n\n");
  REQUIRE(d.stuck.size() == 1);
  CHECK(d.stuck[0].rank == 0);
  CHECK(d.stuck[0].step == 1);
}

TEST_CASE("pytorch_steps: a duplicated SEND is just another ready action") {
  CHECK(simulated("0F0,0SEND_F0,0SEND_F0\n1RECV_F0,1F0\n", {0, 1}, 2) == "0F0,0SEND_F0,0SEND_F0\n,1RECV_F0,1F0\n");
}

TEST_CASE("pytorch_steps: a missing SEND is a deadlock, with the partial timeline and the stuck ranks") {
  // Rank 0 lost its 0SEND_F0. Step 0: rank 0 runs 0F0, rank 1 waits for it. Step 1: rank 0 waits
  // for 1SEND_B0, rank 1 for 0SEND_F0: nobody progresses. The step that made no progress is part
  // of the partial timeline (PyTorch's "WIP comms schedule"), and the stuck ranks' next actions
  // are named by their index in the input, idle steps counted.
  auto d = deadlock("0F0,0RECV_B0,0B0\n,1RECV_F0,1F0,1B0,1SEND_B0\n", {0, 1}, 2);
  CHECK(d.message == "Schedule is not progressing");
  CHECK(d.partial == "0F0,\n,\n");
  REQUIRE(d.stuck.size() == 2);
  CHECK(d.stuck[0].rank == 0);
  CHECK(d.stuck[0].step == 1);
  CHECK(d.stuck[1].rank == 1);
  CHECK(d.stuck[1].step == 1);
}

TEST_CASE("pytorch_steps: a deadlock after some ranks finished names only the unfinished ones") {
  // Rank 0 finishes at step 0; rank 2 waits for 1SEND_F0, which rank 1 never sends.
  auto d = deadlock("0F0\n1RECV_F5\n2RECV_F0,2F0\n", {0, 1, 2}, 3);
  CHECK(d.partial == "0F0\n,\n,\n");
  REQUIRE(d.stuck.size() == 2);
  CHECK(d.stuck[0].rank == 1);
  CHECK(d.stuck[0].step == 0);
  CHECK(d.stuck[1].rank == 2);
  CHECK(d.stuck[1].step == 0);
}

TEST_CASE("pytorch_steps: a schedule with ranks but no actions is not progressing") {
  // PyTorch's loop runs while it has ranks, empty ones included; nothing runs in its first step.
  auto d = deadlock(",,\n\n", {0, 1}, 2);
  CHECK(d.message == "Schedule is not progressing");
  CHECK(d.partial == "\n\n");
  CHECK(d.stuck.empty());
  // No ranks at all: nothing to do.
  CHECK(simulate_pytorch_steps(Schedule{}, {}, 0).rank_count() == 0);
}

TEST_CASE("pytorch_steps: UNSHARD, RESHARD and REDUCE_GRAD are always ready (ppsched's extension)") {
  // PyTorch raises "Unsupported action type 0UNSHARD". Here each takes one step:
  //   step 0: both UNSHARD; 1: 0F0, rank 1 waits; 2: 0SEND_F0, 1RECV_F0; 3: rank 0 waits, 1F0;
  //   4: rank 0 waits, 1B0; 5: 1SEND_B0 then 0RECV_B0 in the second pass; 6: 0B0, 1REDUCE_GRAD;
  //   7: 0REDUCE_GRAD, 1RESHARD; 8: 0RESHARD.
  CHECK(simulated("0UNSHARD,0F0,0SEND_F0,0RECV_B0,0B0,0REDUCE_GRAD,0RESHARD\n"
                  "1UNSHARD,1RECV_F0,1F0,1B0,1SEND_B0,1REDUCE_GRAD,1RESHARD\n",
                  {0, 1}, 2) ==
        "0UNSHARD,0F0,0SEND_F0,,,0RECV_B0,0B0,0REDUCE_GRAD,0RESHARD\n"
        "1UNSHARD,,1RECV_F0,1F0,1B0,1SEND_B0,1REDUCE_GRAD,1RESHARD\n");
}

TEST_CASE("pytorch_steps: an OVERLAP_F_B runs when all its sub-actions are ready (ppsched's extension)") {
  // The container waits for 0RECV_B0 (its 0B0 needs it), takes one step (5), and its 0F1 then
  // counts as done: 0SEND_F1 runs next, and 1RECV_F1 with it.
  CHECK(simulated("0F0,0SEND_F0,0RECV_B0,(0F1;0B0)OVERLAP_F_B,0SEND_F1\n"
                  "1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1\n",
                  {0, 1}, 2) ==
        "0F0,0SEND_F0,,,0RECV_B0,(0F1;0B0)OVERLAP_F_B,0SEND_F1\n"
        ",1RECV_F0,1F0,1B0,1SEND_B0,,1RECV_F1,1F1,1B1\n");
  // Without 0RECV_B0, 0B0 never becomes ready (1B0 ran on rank 1, not on stage 0's owner), so the
  // container never runs, though its 0F1 is ready from the start.
  auto d = deadlock(
      "0F0,0SEND_F0,(0F1;0B0)OVERLAP_F_B,0SEND_F1\n"
      "1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1\n",
      {0, 1}, 2);
  CHECK(d.partial == "0F0,0SEND_F0,,,,\n,1RECV_F0,1F0,1B0,1SEND_B0,\n");
  REQUIRE(d.stuck.size() == 2);
  CHECK(d.stuck[0].step == 2);
  CHECK(d.stuck[1].step == 4);
}

TEST_CASE("pytorch_steps: each sub-action of an OVERLAP_F_B is judged against its own stage's owner") {
  // V placement: rank 0 holds stages 0 and 3, rank 1 stages 1 and 2. 3F0 needs 3RECV_F0 on rank 0,
  // which waits for 2SEND_F0 on rank 1 (step 4, second pass); the container runs at step 5.
  CHECK(simulated("0F0,0SEND_F0,3RECV_F0,(3F0;0F1)OVERLAP_F_B\n1RECV_F0,1F0,2F0,2SEND_F0\n", {0, 1, 1, 0}, 4) ==
        "0F0,0SEND_F0,,,3RECV_F0,(3F0;0F1)OVERLAP_F_B\n"
        ",1RECV_F0,1F0,2F0,2SEND_F0\n");
  // A container on rank 0 holding 2F0, whose stage rank 1 owns: 2F0 needs 1F0 done on rank 1. At
  // step 2 rank 0 looks first and idles; rank 1 runs 1F0; the second pass gives rank 0 the slot.
  CHECK(simulated("0F0,0SEND_F0,(0F1;2F0)OVERLAP_F_B\n1RECV_F0,1F0\n", {0, 1, 1, 0}, 4) ==
        "0F0,0SEND_F0,(0F1;2F0)OVERLAP_F_B\n"
        ",1RECV_F0,1F0\n");
}

TEST_CASE("pytorch_steps: where PyTorch fails with a KeyError, the error says why") {
  // A RECV_F on stage 0 looks up stage -1.
  CHECK(invalid("0RECV_F0\n", {0}, 1) ==
        "simulate: rank 0, action 0 (0RECV_F0): stage -1 has no rank in the stage-to-rank map (PyTorch: KeyError: -1)");
  // Every action looks up its own stage first, even a W or an UNSHARD.
  CHECK(invalid("0F0,3W0\n", {0}, 1) ==
        "simulate: rank 0, action 1 (3W0): stage 3 has no rank in the stage-to-rank map (PyTorch: KeyError: 3)");
  CHECK(invalid("0F0\n", {5}, 1) ==
        "simulate: rank 0, action 0 (0F0): stage 0 is placed on rank 5, but the schedule has 1 ranks "
        "(PyTorch: KeyError: 5)");
  // A container other than a non-empty OVERLAP_F_B is PyTorch's stage -1.
  CHECK(invalid("(0F0)F\n", {0}, 1) ==
        "simulate: rank 0, action 0 ((0F0)F): a container other than a non-empty OVERLAP_F_B has no stage "
        "(PyTorch: KeyError: -1)");
  // Nothing is looked up before the simulation reaches the action.
  CHECK(invalid("0F0,0SEND_F0\n1RECV_F0,1F0,1RECV_B0\n", {0, 1}, 2) ==
        "simulate: rank 1, action 2 (1RECV_B0): stage 2 has no rank in the stage-to-rank map (PyTorch: KeyError: 2)");
}

TEST_CASE("pytorch_steps: the result keeps the schedule's sub-actions and states num_stages") {
  Schedule s = from_csv("(0F0;1B0)OVERLAP_F_B\n");
  Schedule t = simulate_pytorch_steps(s, {0, 0}, 2);
  CHECK(t.num_stages == 2);
  REQUIRE(t.ranks.size() == 1);
  REQUIRE(t.ranks[0].actions.size() == 1);
  CHECK(t.subs(t.ranks[0].actions[0]).size() == 2);
  CHECK(csv_text(t) == "(0F0;1B0)OVERLAP_F_B\n");
}
