#include "ir/schedule.hpp"

#include <algorithm>
#include <random>
#include <thread>

#include "ir/action_text.hpp"
#include "ir/rank_halves.hpp"
#include "support/catch.hpp"

using namespace ppsched;

namespace {
Schedule two_ranks() {
  Schedule s;
  s.ranks.resize(2);
  s.ranks[0].actions = {Action::make(ActionKind::F, 0, 0), Action::idle(), Action::make(ActionKind::B, 0, 0)};
  Action subs[] = {Action::make(ActionKind::F, 3, 4), Action::make(ActionKind::B, 1, 2)};
  s.ranks[1].actions = {Action::container(ActionKind::OverlapFB, s.sub_actions.add(subs))};
  return s;
}
}  // namespace

TEST_CASE("counts and inferred sizes look inside containers") {
  Schedule s = two_ranks();
  CHECK(s.step_count() == 4);
  CHECK(s.action_count() == 3);
  CHECK(infer_stage_count(s) == 4);
  CHECK(infer_microbatch_count(s) == 5);
  CHECK(action_text(s.ranks[1].actions[0], s.sub_actions) == "(3F4;1B2)OVERLAP_F_B");
}

TEST_CASE("inferred placement takes the first rank that mentions a stage") {
  Schedule s = two_ranks();
  Placement p = infer_placement(s);
  CHECK(p.style == PlacementStyle::Explicit);
  CHECK(p.stage_to_rank == std::vector<std::uint32_t>{0, 1, kUnplaced, 1});
}

TEST_CASE("stated sizes win over the actions, sizes in use cover every action either way") {
  Schedule s = two_ranks();  // actions name stages 0..3 and microbatches 0..4
  CHECK(stated_stages(s) == 4);
  CHECK(stated_microbatches(s) == 5);
  s.num_stages = 8;
  s.num_microbatches = 6;
  CHECK(stated_stages(s) == 8);
  CHECK(stages_in_use(s) == 8);
  CHECK(stated_microbatches(s) == 6);
  // A stated size too small for the actions: passes and checks keep it (and report the stray
  // action); arrays indexed by stage or microbatch must still hold every one.
  s.num_stages = 2;
  s.num_microbatches = 3;
  CHECK(stated_stages(s) == 2);
  CHECK(stages_in_use(s) == 4);
  CHECK(stated_microbatches(s) == 3);
  CHECK(microbatches_in_use(s) == 5);
}

TEST_CASE("placement_of: the stated placement, else PyTorch's inference") {
  Schedule s = two_ranks();
  CHECK(placement_of(s) == infer_placement(s));
  s.placement = Placement::loop(2, 4);
  CHECK(placement_of(s) == Placement::loop(2, 4));
  CHECK(Placement::for_shape(PlacementStyle::V, 2, 2) == *Placement::v(2, 4));
  CHECK(Placement::for_shape(PlacementStyle::Loop, 2, 2) == Placement::loop(2, 4));
}

TEST_CASE("same_schedule compares containers by content, not group number") {
  Schedule a = two_ranks();
  Schedule b;
  b.ranks.resize(2);
  Action unrelated[] = {Action::make(ActionKind::W, 0, 0)};
  b.sub_actions.add(unrelated);  // shifts the group numbers
  b.ranks[0].actions = a.ranks[0].actions;
  Action subs[] = {Action::make(ActionKind::F, 3, 4), Action::make(ActionKind::B, 1, 2)};
  b.ranks[1].actions = {Action::container(ActionKind::OverlapFB, b.sub_actions.add(subs))};
  CHECK(same_schedule(a, b));
  b.ranks[0].actions[1] = Action::make(ActionKind::W, 0, 0);
  CHECK_FALSE(same_schedule(a, b));
}

TEST_CASE("inferred sizes and placement: one pass or two threads, the answer of a plain walk") {
  // Over a million steps, so each half of the ranks is read on its own thread (ir/rank_halves.hpp),
  // with stages met first in either half, on several ranks, and inside containers.
  std::mt19937 rng(11);
  Schedule s;
  s.ranks.resize(24);
  for (std::size_t r = 0; r < s.ranks.size(); ++r)
    for (int i = 0; i < 50000; ++i) {
      const auto roll = rng() % 100;
      const auto stage = static_cast<std::uint16_t>(roll < 90 ? r : rng() % 40);
      if (roll < 5) {
        s.ranks[r].actions.push_back(Action::idle());
      } else if (roll < 7) {
        const Action subs[] = {Action::make(ActionKind::F, static_cast<std::uint16_t>(rng() % 40), rng() % 70000),
                               Action::make(ActionKind::B, stage, rng() % 1000)};
        s.ranks[r].actions.push_back(Action::container(ActionKind::OverlapFB, s.sub_actions.add(subs)));
      } else {
        s.ranks[r].actions.push_back(Action::make(ActionKind::F, stage, static_cast<std::uint32_t>(rng() % 50000)));
      }
    }
  REQUIRE(s.step_count() >= (std::size_t{1} << 20));
  std::vector<std::uint32_t> first(40, kUnplaced);
  std::uint32_t stages = 0, microbatches = 0;
  for (std::size_t r = 0; r < s.ranks.size(); ++r)
    for (const Action& a : s.ranks[r].actions) {
      std::vector<Action> leaves{a};
      if (a.is_container()) leaves.assign(s.subs(a).begin(), s.subs(a).end());
      for (const Action& leaf : leaves) {
        if (!leaf.has_stage()) continue;
        if (first[leaf.stage] == kUnplaced) first[leaf.stage] = static_cast<std::uint32_t>(r);
        stages = std::max<std::uint32_t>(stages, leaf.stage + 1u);
        microbatches = std::max(microbatches, leaf.microbatch() + 1u);
      }
    }
  first.resize(stages);
  CHECK(infer_stage_count(s) == stages);
  CHECK(infer_microbatch_count(s) == microbatches);
  CHECK(infer_placement(s).stage_to_rank == first);
  const InferredShape shape = infer_shape(s);
  CHECK(shape.placement.stage_to_rank == first);
  CHECK(shape.microbatches == microbatches);
  const InferredShape small = infer_shape(two_ranks());
  CHECK(small.placement == infer_placement(two_ranks()));
  CHECK(small.microbatches == 5);
}

TEST_CASE("a thread inside OneThreadHere reads every rank itself, and only while it lasts") {
  // Four ranks of 300k steps: above the million steps from which the ranks are split.
  Schedule s;
  s.ranks.resize(4);
  for (auto& rank : s.ranks) rank.actions.assign(300000, Action::make(ActionKind::F, 0, 0));
  const std::size_t split = std::thread::hardware_concurrency() > 1 ? 2 : 4;
  CHECK(second_half_start(s) == split);
  {
    OneThreadHere alone;
    CHECK(second_half_start(s) == 4);
    {
      OneThreadHere nested;
      CHECK(second_half_start(s) == 4);
    }
    CHECK(second_half_start(s) == 4);  // the outer one still holds
    // Another thread is not inside it.
    std::size_t elsewhere = 0;
    std::thread([&] { elsewhere = second_half_start(s); }).join();
    CHECK(elsewhere == split);
  }
  CHECK(second_half_start(s) == split);
}
