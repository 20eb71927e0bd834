#include "model/costs.hpp"

#include "support/catch.hpp"

using namespace ppsched;

TEST_CASE("unit costs: F = I = W = 1, B = 2, the rest free") {
  const KindCosts c = unit_costs();
  CHECK(c[static_cast<std::size_t>(ActionKind::F)] == 1);
  CHECK(c[static_cast<std::size_t>(ActionKind::I)] == 1);
  CHECK(c[static_cast<std::size_t>(ActionKind::W)] == 1);
  CHECK(c[static_cast<std::size_t>(ActionKind::B)] == 2);
  CHECK(c[static_cast<std::size_t>(ActionKind::SendF)] == 0);
  CHECK(c[static_cast<std::size_t>(ActionKind::Unshard)] == 0);
}

TEST_CASE("uniform splits a rank's costs over its stages, and stages past the table cost nothing") {
  const CostModel m = CostModel::uniform(4, 2, unit_costs());
  REQUIRE(m.per_stage.size() == 4);
  CHECK(m.cost(3, ActionKind::F) == 0.5);
  CHECK(m.cost(0, ActionKind::B) == 1);
  CHECK(m.cost(4, ActionKind::F) == 0);
  CHECK(CostModel::uniform(1, 0, unit_costs()).cost(0, ActionKind::F) == 1);  // 0 stages per rank: as 1
}

TEST_CASE("an OVERLAP_F_B lasts its parts' sum times the overlap factor") {
  Schedule s;
  s.num_stages = 2;
  const Action f = Action::make(ActionKind::F, 0, 0);
  const Action b = Action::make(ActionKind::B, 1, 0);
  const Action parts[] = {f, b};
  const Action overlap = Action::container(ActionKind::OverlapFB, s.sub_actions.add(parts));
  CostModel m = CostModel::uniform(2, 1, unit_costs());
  m.overlap_factor = 0.5;
  CHECK(m.duration(s, f) == 1);
  CHECK(m.duration(s, b) == 2);
  CHECK(m.duration(s, overlap) == Approx(1.5));
  CHECK(m.duration(s, Action::idle()) == 0);
}

TEST_CASE("for_pipeline: stages / ranks stages per rank, 1 with no ranks or fewer stages than ranks") {
  KindCosts per_rank = unit_costs();
  per_rank[static_cast<std::size_t>(ActionKind::F)] = 6;
  const CostModel v = CostModel::for_pipeline(4, 8, per_rank);  // V: 2 stages per rank
  REQUIRE(v.per_stage.size() == 8);
  CHECK(v.cost(7, ActionKind::F) == 3);
  CHECK(v.cost(0, ActionKind::B) == 1);
  const CostModel three = CostModel::for_pipeline(4, 12, per_rank);
  CHECK(three.cost(11, ActionKind::F) == 2);
  const CostModel uneven = CostModel::for_pipeline(4, 9, per_rank);  // 9 / 4 = 2, rounded down
  CHECK(uneven.per_stage.size() == 9);
  CHECK(uneven.cost(8, ActionKind::F) == 3);
  const CostModel fewer = CostModel::for_pipeline(4, 2, per_rank);
  CHECK(fewer.per_stage.size() == 2);
  CHECK(fewer.cost(1, ActionKind::F) == 6);
  CHECK(CostModel::for_pipeline(0, 3, per_rank).cost(2, ActionKind::F) == 6);
  CHECK(CostModel::for_pipeline(2, 2).per_stage == CostModel::uniform(2, 1, unit_costs()).per_stage);
}
