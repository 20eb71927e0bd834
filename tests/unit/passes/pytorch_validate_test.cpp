#include <string>

#include "passes/passes.hpp"
#include "support/schedule_text.hpp"

using namespace ppsched;
using namespace ppsched::test;

namespace {

// The PassError's message, or "valid".
std::string verdict(std::string_view csv, std::uint32_t ranks, std::uint32_t stages, std::uint32_t microbatches,
                    bool lenient = false) {
  try {
    pytorch_validate(schedule_from_csv(csv, lenient), ranks, stages, microbatches);
  } catch (const PassError& e) {
    return e.what();
  }
  return "valid";
}

}  // namespace

TEST_CASE("pytorch_validate: PyTorch's own test cases") {
  CHECK(verdict("0F0,0B0\n1F0,1B0\n", 2, 2, 1) == "valid");
  CHECK(verdict("0F0,0I0,0W0\n1F0,1I0,1W0\n", 2, 2, 1) == "valid");
  CHECK(verdict("0F0,0B0\n", 2, 2, 1) == "Schedule has incorrect number of ranks - expected 2, actual 1");
  CHECK(verdict("0F0\n1F0\n", 2, 2, 1) ==
        "Invalid backward microbatches for stage 0: expected 1 total backwards,             but got B=0, I=0, W=0");
}

TEST_CASE("pytorch_validate: returns the stage-to-rank map it infers") {
  Schedule s = schedule_from_csv("0F0,3F0,3B0,0B0\n1F0,2F0,2B0,1B0\n");
  CHECK(pytorch_validate(s, 2, 4, 1) == std::vector<std::uint32_t>{0, 1, 1, 0});
  // Every action records its stage, communication included, even beyond num_stages.
  Schedule comms = schedule_from_csv("0F0,0B0,5SEND_F0\n1F0,1B0\n");
  CHECK(pytorch_validate(comms, 2, 2, 1) == std::vector<std::uint32_t>{0, 1, kUnplaced, kUnplaced, kUnplaced, 0});
}

TEST_CASE("pytorch_validate: order errors, with the step PyTorch marks in its grid") {
  Schedule s = schedule_from_csv("0F0,0B0\n,1B0,1F0\n");
  try {
    pytorch_validate(s, 2, 2, 1);
    FAIL("accepted");
  } catch (const PassError& e) {
    CHECK(std::string(e.what()) ==
          "Rank 1, step 1: Running Full Backward for stage 1, microbatch 0 without first running Forward");
    REQUIRE(e.grid_step());
    CHECK(*e.grid_step() == 1);
  }
  CHECK(verdict("0I0,0F0,0W0\n", 1, 1, 1) ==
        "Rank 0, step 0: Running Backward Input for stage 0, microbatch 0 without first running Forward");
  CHECK(verdict("0F0,0W0,0I0\n", 1, 1, 1) ==
        "Rank 0, step 1: Running Backward Weight for stage 0, microbatch 0 without first running Backward Input");
  // A microbatch-less action (PyTorch reads `0F` leniently) prints Python's None.
  CHECK(verdict("0B\n", 1, 1, 1, /*lenient=*/true) ==
        "Rank 0, step 0: Running Full Backward for stage 0, microbatch None without first running Forward");
}

TEST_CASE("pytorch_validate: a stage on two ranks") {
  CHECK(verdict("0F0,0B0,1F0\n1F0,1B0\n", 2, 2, 1) == "Rank 1, step 0: Stage 1 is assigned to both rank 1 and rank 0");
  // Empty containers are PyTorch's stage -1 and are mapped too.
  CHECK(verdict("0F0,0B0,()OVERLAP_F_B\n1F0,1B0,()OVERLAP_F_B\n", 2, 2, 1, /*lenient=*/true) ==
        "Rank 1, step 2: Stage -1 is assigned to both rank 1 and rank 0");
}

TEST_CASE("pytorch_validate: counts are of distinct microbatches, checked stage by stage") {
  // A duplicate passes: the counts are set sizes.
  CHECK(verdict("0F0,0F0,0B0,0B0\n", 1, 1, 1) == "valid");
  CHECK(verdict("0F0,0F1,0B0,0B1\n", 1, 1, 1) == "Got 2 _ComputationType.FORWARD microbatches for stage 0, expected 1");
  CHECK(verdict("0F0,0I0,0W0,0I0\n", 1, 1, 1) == "valid");
  CHECK(verdict("0F0,0F1,0I0,0W0,0I1\n", 1, 1, 2) ==
        "Invalid backward microbatches for stage 0: I and W must have equal counts,             but got I=2, W=1");
  // B + (I + W) / 2: one B and one I/W pair make two.
  CHECK(verdict("0F0,0F1,0B0,0I1,0W1\n", 1, 1, 2) == "valid");
  // A stage nobody runs.
  CHECK(verdict("0F0,0B0\n", 1, 2, 1) == "Got 0 _ComputationType.FORWARD microbatches for stage 1, expected 1");
}

TEST_CASE("pytorch_validate: OVERLAP_F_B is checked through its sub-actions") {
  CHECK(verdict("0F0,(0F1;0B0)OVERLAP_F_B,0B1\n", 1, 1, 2) == "valid");
  CHECK(verdict("(0B0;0F0)OVERLAP_F_B\n", 1, 1, 1) ==
        "Rank 0, step 0: Running Full Backward for stage 0, microbatch 0 without first running Forward");
  // PyTorch never checks the microbatch range: one forward and one backward of microbatch 1 pass.
  CHECK(verdict("(0F1;0B1)OVERLAP_F_B\n", 1, 1, 1) == "valid");
}

TEST_CASE("pytorch_validate: a compute action outside the stages, where PyTorch raises KeyError") {
  CHECK(verdict("0F0,0B0,7F0\n", 1, 1, 1) ==
        "Rank 0, step 2: 7F0 is on stage 7, outside the 1 stages of the schedule (PyTorch: KeyError: 7)");
  CHECK(verdict("()F\n", 1, 1, 1, /*lenient=*/true) ==
        "Rank 0, step 0: -1F is on stage -1, outside the 1 stages of the schedule (PyTorch: KeyError: -1)");
  // Other kinds are only mapped.
  CHECK(verdict("0F0,0B0,7UNSHARD\n", 1, 1, 1) == "valid");
}
