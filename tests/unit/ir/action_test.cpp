#include "ir/action.hpp"

#include "support/catch.hpp"

using namespace ppsched;

TEST_CASE("an action is 8 bytes and trivially copyable") {
  STATIC_REQUIRE(sizeof(Action) == 8);
  STATIC_REQUIRE(std::is_trivially_copyable_v<Action>);
}

TEST_CASE("kind names are PyTorch's and round-trip") {
  CHECK(kind_name(ActionKind::F) == "F");
  CHECK(kind_name(ActionKind::SendB) == "SEND_B");
  CHECK(kind_name(ActionKind::ReduceGrad) == "REDUCE_GRAD");
  CHECK(kind_name(ActionKind::OverlapFB) == "OVERLAP_F_B");
  CHECK(kind_name(ActionKind::Idle).empty());
  for (int k = 1; k < kActionKindCount; ++k) {
    auto kind = static_cast<ActionKind>(k);
    REQUIRE(kind_from_name(kind_name(kind)) == kind);
  }
  CHECK_FALSE(kind_from_name(""));
  CHECK_FALSE(kind_from_name("f"));
  CHECK_FALSE(kind_from_name("SEND"));
}

TEST_CASE("kind classes follow PyTorch's is_compute_op") {
  CHECK(is_compute(ActionKind::OverlapFB));
  CHECK(is_compute(ActionKind::W));
  CHECK_FALSE(is_compute(ActionKind::SendF));
  CHECK_FALSE(is_compute(ActionKind::ReduceGrad));
  CHECK(takes_microbatch(ActionKind::RecvB));
  CHECK_FALSE(takes_microbatch(ActionKind::Unshard));
  CHECK_FALSE(takes_microbatch(ActionKind::OverlapFB));
}

TEST_CASE("plain, idle and container actions") {
  Action f = Action::make(ActionKind::F, 3, 7);
  CHECK(f.stage == 3);
  CHECK(f.microbatch() == 7);
  CHECK(f.has_microbatch());
  CHECK_FALSE(f.is_container());
  Action u = Action::make(ActionKind::Unshard, 2);
  CHECK_FALSE(u.has_microbatch());
  Action idle = Action::idle();
  CHECK(idle.is_idle());
  Action c = Action::container(ActionKind::OverlapFB, 5);
  CHECK(c.is_container());
  CHECK(c.group() == 5);
  CHECK_FALSE(c.has_stage());
  CHECK(c.microbatch() == Action::kNoMicrobatch);  // the group is not a microbatch
  CHECK_FALSE(c == Action::make(ActionKind::OverlapFB, Action::kNoStage, 5));
}
