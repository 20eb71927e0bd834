#include <optional>
#include <string>

#include "passes/passes.hpp"
#include "support/schedule_text.hpp"

using namespace ppsched;
using namespace ppsched::test;

namespace {

std::string lowered(std::string_view csv, std::optional<std::int64_t> max_active = 3, bool lenient = false) {
  return csv_text(add_unshard_reshard(schedule_from_csv(csv, lenient), max_active));
}

}  // namespace

TEST_CASE("add_unshard_reshard: PyTorch's own test cases") {
  // test_schedule.py's expectations (upstream-artifacts/test_vectors.json).
  CHECK(lowered("0F0,0F1,,0B0,0B1\n") == "0UNSHARD,0F0,0F1,0B0,0B1,0RESHARD\n");
  CHECK(lowered("0F0,0F1,1F0,1F1,1B0,1B1,0B0,0B1\n") ==
        "0UNSHARD,1UNSHARD,0F0,0F1,1F0,1F1,1B0,1B1,1RESHARD,0B0,0B1,0RESHARD\n");
}

TEST_CASE("add_unshard_reshard: the look-ahead keeps the next three stages, evicting the rest") {
  // At 2F0 the look-ahead is [2, 3, 0]; at 3F0 only [3, 0] remain to the end.
  CHECK(lowered("0F0,1F0,2F0,3F0,0B0\n") ==
        "0UNSHARD,1UNSHARD,2UNSHARD,0F0,0RESHARD,3UNSHARD,1F0,1RESHARD,0UNSHARD,2F0,2RESHARD,3F0,3RESHARD,0B0,"
        "0RESHARD\n");
}

TEST_CASE("add_unshard_reshard: evictions come out in CPython's set order, not sorted") {
  // Active {24, 8, 0} sit in slots 0, 1 and 6 of the 8-slot table (8 and 0 collide with 24).
  // At 0W2 the look-ahead is [0, 16]: 24 and 8 go, in slot order.
  CHECK(lowered(",(24B2;8B1)OVERLAP_F_B,,0W2,16W2,16B0\n") ==
        "24UNSHARD,8UNSHARD,0UNSHARD,(24B2;8B1)OVERLAP_F_B,24RESHARD,8RESHARD,16UNSHARD,0W2,0RESHARD,16W2,16B0,"
        "16RESHARD\n");
}

TEST_CASE("add_unshard_reshard: an OVERLAP_F_B adds all its stages and may pass the limit") {
  CHECK(lowered("0F0,1F0,(2F0;3B0)OVERLAP_F_B\n") ==
        "0UNSHARD,1UNSHARD,2UNSHARD,3UNSHARD,0F0,0RESHARD,1F0,1RESHARD,(2F0;3B0)OVERLAP_F_B,2RESHARD,3RESHARD\n");
}

TEST_CASE("add_unshard_reshard: another container kind counts as PyTorch's stage -1") {
  CHECK(lowered("(0F1)F,0F0\n", 3, /*lenient=*/true) == "-1UNSHARD,0UNSHARD,(0F1)F,-1RESHARD,0F0,0RESHARD\n");
}

TEST_CASE("add_unshard_reshard: with a limit of 0 only an OVERLAP_F_B ends the look-ahead") {
  CHECK(lowered("0F0,1F0,(2F0;3B0)OVERLAP_F_B,4F0\n", 0) ==
        "0UNSHARD,1UNSHARD,2UNSHARD,3UNSHARD,0F0,0RESHARD,1F0,1RESHARD,(2F0;3B0)OVERLAP_F_B,2RESHARD,3RESHARD,"
        "4UNSHARD,4F0,4RESHARD\n");
}

// PyTorch's own outputs at cff2ecc8 for these inputs (the pytorch-oracle harness): a negative limit
// is a limit of 0, and None looks to the end of the rank, or fails on an OVERLAP_F_B.
TEST_CASE("add_unshard_reshard: a negative limit or None looks ahead as far as PyTorch does") {
  CHECK(lowered("0F0,1F0,(2F0;3B0)OVERLAP_F_B,4F0\n", -1) == lowered("0F0,1F0,(2F0;3B0)OVERLAP_F_B,4F0\n", 0));
  const char* no_overlap = "0F0,1F0,2F0,0B0,1B0,4F0\n";
  const char* pytorch =
      "0UNSHARD,1UNSHARD,2UNSHARD,4UNSHARD,0F0,1F0,2F0,2RESHARD,0B0,0RESHARD,1B0,1RESHARD,4F0,4RESHARD\n";
  CHECK(lowered(no_overlap, std::nullopt) == pytorch);
  CHECK(lowered(no_overlap, -2) == pytorch);
  CHECK_THROWS_WITH(lowered("0F0,1F0,2F0,0B0,(2F0;3B0)OVERLAP_F_B,4F0\n", std::nullopt),
                    Catch::Contains("TypeError: '>=' not supported between instances of 'int' and 'NoneType'"));
}

TEST_CASE("add_unshard_reshard: ranks are independent, idle steps and empty ranks stay empty") {
  CHECK(lowered("0F0,,0B0\n\n,,\n1F0,1B0\n") == "0UNSHARD,0F0,0B0,0RESHARD\n\n\n1UNSHARD,1F0,1B0,1RESHARD\n");
}

TEST_CASE("add_unshard_reshard: one stage per rank costs one UNSHARD and one RESHARD, however long") {
  // PyTorch's look-ahead never stops early here and rescans the whole rest of the rank.
  Schedule s;
  s.ranks.resize(1);
  for (std::uint32_t m = 0; m < 200000; ++m) s.ranks[0].actions.push_back(Action::make(ActionKind::F, 0, m));
  Schedule out = add_unshard_reshard(s);
  REQUIRE(out.ranks[0].actions.size() == 200002);
  CHECK(out.ranks[0].actions.front() == Action::make(ActionKind::Unshard, 0));
  CHECK(out.ranks[0].actions.back() == Action::make(ActionKind::Reshard, 0));
}

TEST_CASE("add_unshard_reshard: the input is left as it was") {
  Schedule s = schedule_from_csv("0F0,,1F0\n");
  std::string before = csv_text(s);
  add_unshard_reshard(s);
  CHECK(csv_text(s) == before);
}
