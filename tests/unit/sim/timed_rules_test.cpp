// The timed model's shared per-action rules (sim/timed_rules.hpp): an action's duration, what
// counts as busy time, and the split of an idle gap into its causes.
#include <utility>
#include <vector>

#include "sim/timed_rules.hpp"
#include "support/catch.hpp"

using namespace ppsched;

TEST_CASE("an action lasts its kind's cost, a container its sub-actions' sum times the overlap factor") {
  CostModel costs = CostModel::uniform(2, 1, unit_costs());
  costs.per_stage[1][static_cast<std::size_t>(ActionKind::F)] = 1.5;
  costs.overlap_factor = 0.75;
  Schedule s;
  const std::vector<Action> subs{Action::make(ActionKind::F, 1, 0), Action::make(ActionKind::B, 0, 0)};
  const Action overlap = Action::container(ActionKind::OverlapFB, s.sub_actions.add(subs));
  CHECK(action_duration(costs, s, Action::make(ActionKind::F, 1, 3)) == 1.5);
  CHECK(action_duration(costs, s, Action::make(ActionKind::B, 0, 3)) == 2.0);
  CHECK(plain_action_duration(costs, Action::make(ActionKind::F, 1, 3)) == 1.5);
  CHECK(action_duration(costs, s, overlap) == (1.5 + 2.0) * 0.75);
  CHECK(action_duration(costs, s, overlap) == costs.duration(s, overlap));
  CHECK(action_duration(costs, s, Action::make(ActionKind::F, 7, 0)) == 0.0);  // a stage without costs
}

TEST_CASE("busy time is a compute action's length, and nothing for a zero-length action or a blocking comm") {
  CHECK(busy_time(ActionKind::F, 1.0, 3.5) == 2.5);
  CHECK(busy_time(ActionKind::OverlapFB, 0.0, 1.0) == 1.0);
  CHECK(busy_time(ActionKind::W, 2.0, 2.0) == 0.0);
  CHECK(busy_time(ActionKind::RecvF, 1.0, 3.0) == 0.0);
  CHECK(busy_time(ActionKind::SendB, 1.0, 3.0) == 0.0);
}

TEST_CASE("an idle gap is split by what released the action after it") {
  auto split = [](double gap, double start, ReleaseCause by, bool other_rank, double by_end) {
    RankUsage u;
    split_idle_gap(u, gap, start, by, other_rank, by_end);
    return std::pair{u.comm_wait, u.dependency_wait};
  };
  // a SEND or RECV whose transfer began at `by_end`: the gap after that is the transfer, the
  // part before it waited for the other end to be posted (a dependency); a free transfer that
  // ends where it began adds no transfer time
  CHECK(split(3, 10, ReleaseCause::Comm, false, 10) == std::pair{0.0, 3.0});
  CHECK(split(3, 10, ReleaseCause::Comm, true, 9) == std::pair{1.0, 2.0});
  CHECK(split(3, 10, ReleaseCause::Comm, false, 5) == std::pair{3.0, 0.0});
  // another rank's action that ended 1 before the start: its transfer covers the gap's last 1
  CHECK(split(3, 10, ReleaseCause::Other, true, 9) == std::pair{1.0, 2.0});
  // ... or all of it, when it ended before the gap began
  CHECK(split(3, 10, ReleaseCause::Other, true, 5) == std::pair{3.0, 0.0});
  // one that ended at the start, the rank's own action, or nothing: waiting for a dependency
  CHECK(split(3, 10, ReleaseCause::Other, true, 10) == std::pair{0.0, 3.0});
  CHECK(split(3, 10, ReleaseCause::Other, false, 5) == std::pair{0.0, 3.0});
  CHECK(split(3, 10, ReleaseCause::None, true, 5) == std::pair{0.0, 3.0});
  // the causes add up over gaps
  RankUsage u;
  split_idle_gap(u, 2, 4, ReleaseCause::Comm, false, 0);
  split_idle_gap(u, 3, 10, ReleaseCause::Other, true, 9);
  CHECK(u.comm_wait == 3.0);
  CHECK(u.dependency_wait == 2.0);
}
