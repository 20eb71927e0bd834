#include <string>

#include "passes/passes.hpp"
#include "support/schedule_text.hpp"

using namespace ppsched;
using namespace ppsched::test;

namespace {

std::string lowered(std::string_view csv, std::vector<std::uint32_t> stage_to_rank, std::uint32_t num_stages,
                    bool lenient = false) {
  return csv_text(add_send_recv(schedule_from_csv(csv, lenient), stage_to_rank, num_stages));
}

// The PassError's message, or "no error".
std::string error_of(std::string_view csv, std::vector<std::uint32_t> stage_to_rank, std::uint32_t num_stages,
                     std::vector<PassError::Stuck>* stuck = nullptr) {
  try {
    add_send_recv(schedule_from_csv(csv), stage_to_rank, num_stages);
  } catch (const PassError& e) {
    if (stuck) *stuck = e.stuck();
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("add_send_recv: PyTorch's own test cases") {
  // test_schedule.py's expectations (upstream-artifacts/test_vectors.json). Rank 1's idle head
  // lets rank 0 run twice before rank 1 looks: both RECV_F come first ("interesting").
  CHECK(lowered("0F0,0F1,,0B0,,0B1\n,1F0,1B0,1F1,1B1,\n", {0, 1}, 2) ==
        "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n"
        "1RECV_F0,1RECV_F1,1F0,1B0,1SEND_B0,1F1,1B1,1SEND_B1\n");
  // V placement: stages 1 and 2 share rank 1 and exchange nothing.
  CHECK(lowered("0F0,0F1,,3F0,3B0,3F1,3B1,0B0,3W0,0B1,3W1,0W0,0W1\n"
                ",1F0,2F0,1F1,2F1,2B0,1B0,2B1,1B1,2W0,2W1,1W0,1W1\n",
                {0, 1, 1, 0}, 4) ==
        "0F0,0SEND_F0,0F1,0SEND_F1,3RECV_F0,3F0,3B0,3SEND_B0,3RECV_F1,3F1,3B1,3SEND_B1,0RECV_B0,0B0,3W0,0RECV_B1,"
        "0B1,3W1,0W0,0W1\n"
        "1RECV_F0,1RECV_F1,1F0,2F0,2SEND_F0,1F1,2RECV_B0,2F1,2SEND_F1,2B0,2RECV_B1,1B0,1SEND_B0,2B1,1B1,1SEND_B1,"
        "2W0,2W1,1W0,1W1\n");
}

TEST_CASE("add_send_recv: a lower rank's RECV is seen by a higher rank in the same round") {
  // Round 1: rank 0 runs 0F0 and hands 1RECV_F0 to rank 1, which PyTorch visits next and finds
  // ready. Had rank 1 waited a round, 1RECV_F1 would have landed before 1F0.
  CHECK(lowered("0F0,0F1\n1F0,1F1\n", {0, 1}, 2) == "0F0,0SEND_F0,0F1,0SEND_F1\n1RECV_F0,1F0,1RECV_F1,1F1\n");
}

TEST_CASE("add_send_recv: a higher rank's RECV is seen by a lower rank in the next round") {
  CHECK(lowered("0B0\n1B0\n", {0, 1}, 2) == "0RECV_B0,0B0\n1B0,1SEND_B0\n");
}

TEST_CASE("add_send_recv: an OVERLAP_F_B is emitted once, then its sub-actions' SENDs") {
  CHECK(lowered("0F0,(0F1;3B0)OVERLAP_F_B\n1F0\n", {0, 1, 1, 0}, 4) ==
        "0F0,0SEND_F0,(0F1;3B0)OVERLAP_F_B,0SEND_F1,3SEND_B0\n1RECV_F0,1F0,1RECV_F1,2RECV_B0\n");
}

TEST_CASE("add_send_recv: W and non-compute actions are always ready and send nothing") {
  CHECK(lowered("0UNSHARD,0W0,0REDUCE_GRAD\n1RESHARD\n", {0, 1}, 2) == "0UNSHARD,0W0,0REDUCE_GRAD\n1RESHARD\n");
}

TEST_CASE("add_send_recv: a rank of idle steps only ends up empty") {
  CHECK(lowered("0F0\n\"\"\n", {0, 1}, 1) == "0F0\n\n");
}

TEST_CASE("add_send_recv: a cross-rank wait cycle is reported with each rank's head") {
  std::vector<PassError::Stuck> stuck;
  CHECK(error_of("0B0\n,1F0\n", {0, 1}, 2, &stuck) == "Malformed compute schedule, can't schedule sends/recvs");
  REQUIRE(stuck.size() == 2);
  CHECK(stuck[0].rank == 0);
  CHECK(stuck[0].step == 0);
  CHECK(stuck[1].rank == 1);
  CHECK(stuck[1].step == 1);  // the idle step before it was popped
}

TEST_CASE("add_send_recv: errors where PyTorch raises KeyError or asserts") {
  CHECK(error_of("0F0\n1F0\n", {0}, 3) ==
        "Rank 0: 0F0 needs the rank of stage 1, which the stage-to-rank map does not have (PyTorch: KeyError: 1)");
  CHECK(error_of("0F0\n", {0, 1}, 2) ==
        "Rank 0: 0F0 sends to stage 1 on rank 1, but the schedule has 1 ranks (PyTorch: KeyError: 1)");
  CHECK(error_of("0F0\n\n", {0, 1}, 2) ==
        "Rank 1 has no actions (PyTorch's _add_send_recv asserts: rank=1, len(compute_actions[rank])=0)");
}

TEST_CASE("add_send_recv: the input is left as it was") {
  Schedule s = schedule_from_csv("0F0,,0B0\n1F0,1B0\n");
  std::string before = csv_text(s);
  add_send_recv(s, {0, 1}, 2);
  CHECK(csv_text(s) == before);
}
