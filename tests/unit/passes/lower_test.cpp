#include <string>

#include "passes/passes.hpp"
#include "support/schedule_text.hpp"

using namespace ppsched;
using namespace ppsched::test;

namespace {

std::string error_of_runtime(const Schedule& s) {
  try {
    lower_runtime(s);
  } catch (const PassError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("lower_runtime: validate, UNSHARD/RESHARD, REDUCE_GRAD, then SEND/RECV") {
  Schedule s = schedule_from_csv("0F0,,0B0\n1F0,1B0\n");
  CHECK(csv_text(lower_runtime(s)) ==
        "0UNSHARD,0F0,0SEND_F0,0RECV_B0,0B0,0REDUCE_GRAD,0RESHARD\n"
        "1UNSHARD,1RECV_F0,1F0,1B0,1SEND_B0,1REDUCE_GRAD,1RESHARD\n");
}

TEST_CASE("lower_runtime: uses the validated map, not the stated placement") {
  // Loop placement would put stage 1 on rank 1; the schedule runs stages 0 and 1 on rank 0.
  Schedule s = schedule_from_csv("0F0,1F0,1B0,0B0\n2F0,2B0\n");
  s.placement = Placement::loop(2, 3);
  CHECK(csv_text(lower_runtime(s)) ==
        "0UNSHARD,1UNSHARD,0F0,1F0,1SEND_F0,1RECV_B0,1B0,1REDUCE_GRAD,1RESHARD,0B0,0REDUCE_GRAD,0RESHARD\n"
        "2UNSHARD,2RECV_F0,2F0,2B0,2SEND_B0,2REDUCE_GRAD,2RESHARD\n");
}

TEST_CASE("lower_runtime: a rank with nothing to compute trips PyTorch's assertion") {
  // Its idle steps are dropped before `_add_send_recv`, which asserts on an empty rank.
  Schedule s = schedule_from_csv("0F0,1F0,1B0,0B0\n,,\n");
  CHECK(error_of_runtime(s) ==
        "Rank 1 has no actions (PyTorch's _add_send_recv asserts: rank=1, len(compute_actions[rank])=0)");
}

TEST_CASE("lower_runtime: stated sizes take precedence over inferred ones") {
  Schedule s = schedule_from_csv("0F0,0B0\n1F0,1B0\n");
  s.num_microbatches = 2;
  CHECK(error_of_runtime(s) == "Got 1 _ComputationType.FORWARD microbatches for stage 0, expected 2");
  s.num_microbatches = 0;
  s.num_stages = 3;
  CHECK(error_of_runtime(s) == "Got 0 _ComputationType.FORWARD microbatches for stage 2, expected 1");
}

TEST_CASE("lower_runtime: a communication action in the input is PyTorch's compute-only error") {
  Schedule s = schedule_from_csv("0F0,0B0,0REDUCE_GRAD\n1F0,1B0,1REDUCE_GRAD\n");
  CHECK(error_of_runtime(s) ==
        "Expected compute-only schedule but found communication action '0REDUCE_GRAD' at rank 0, position 2. "
        "Communication actions (e.g. SEND_F, RECV_F, etc.) should not be present when format='compute_only'.");
}

TEST_CASE("lower_send_recv: stated placement, or PyTorch's first-rank inference") {
  Schedule s = schedule_from_csv("0F0,3F0,3B0,0B0\n1F0,2F0,2B0,1B0\n");
  const std::string v =
      "0F0,0SEND_F0,3RECV_F0,3F0,3B0,3SEND_B0,0RECV_B0,0B0\n"
      "1RECV_F0,1F0,2F0,2SEND_F0,2RECV_B0,2B0,1B0,1SEND_B0\n";
  CHECK(csv_text(lower_send_recv(s)) == v);
  // A stated map is used as given, even one the schedule contradicts: 2F0's RECV goes to
  // rank 1, where the map says stage 3 is, and rank 0's 3F0 waits for it forever.
  s.placement = Placement::explicit_map({0, 1, 1, 1});
  try {
    lower_send_recv(s);
    FAIL("lowered");
  } catch (const PassError& e) {
    CHECK(std::string(e.what()) == "Malformed compute schedule, can't schedule sends/recvs");
  }
}
