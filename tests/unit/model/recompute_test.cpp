// Recompute: how often PyTorch re-runs a checkpointed stage's forward under each backward, and
// what that adds to the cost model.
#include "model/recompute.hpp"
#include "model/comm.hpp"
#include "model/costs.hpp"
#include "support/catch.hpp"

using namespace ppsched;

namespace {

Recompute full(std::uint32_t weight_groups = 1) {
  Recompute r;
  r.mode = Recompute::Mode::Full;
  r.weight_groups = weight_groups;
  return r;
}

}  // namespace

TEST_CASE("a checkpointed stage recomputes once under B, and 1 + weight_groups times under I and W") {
  const Recompute r = full(9);
  CHECK(recomputes_of(r, false, ActionKind::B) == 1);
  CHECK(recomputes_of(r, false, ActionKind::I) == 1);
  CHECK(recomputes_of(r, false, ActionKind::W) == 9);  // one autograd call per parameter group
  CHECK(recomputes_of(r, false, ActionKind::F) == 0);
  CHECK(recomputes_of(r, false, ActionKind::SendB) == 0);
  // Stage 0: PyTorch skips I (its inputs take no gradient) and W runs the whole backward at once.
  CHECK(recomputes_of(r, true, ActionKind::I) == 0);
  CHECK(recomputes_of(r, true, ActionKind::W) == 1);
  CHECK(recomputes_of(Recompute{}, false, ActionKind::B) == 0);
}

TEST_CASE("with_recompute charges each checkpointed stage's backwards its recomputes, and no other stage") {
  KindCosts per_rank = unit_costs();
  per_rank[static_cast<std::size_t>(ActionKind::F)] = 2;
  const CostModel base = CostModel::for_pipeline(3, 3, per_rank);  // F=2, I=W=1, B=2 per stage
  std::vector<StageSpec> spec(3);
  spec[0].recompute = full(9);
  spec[1].recompute = full(9);
  spec[2].recompute.mode = Recompute::Mode::Selective;
  spec[2].recompute.cost = 0.25;  // a quarter of the forward: 0.5
  spec[2].recompute.weight_groups = 2;
  const CostModel c = with_recompute(base, spec);
  auto at = [&](std::uint16_t st, ActionKind k) { return c.cost(st, k); };
  CHECK(at(0, ActionKind::F) == 2);
  CHECK(at(0, ActionKind::B) == 4);
  CHECK(at(0, ActionKind::I) == 1);
  CHECK(at(0, ActionKind::W) == 3);
  CHECK(at(1, ActionKind::B) == 4);
  CHECK(at(1, ActionKind::I) == 3);
  CHECK(at(1, ActionKind::W) == 19);
  CHECK(at(2, ActionKind::B) == 2.5);
  CHECK(at(2, ActionKind::I) == 1.5);
  CHECK(at(2, ActionKind::W) == 2);
  CHECK(at(2, ActionKind::F) == 2);
  // Without a recompute the costs are untouched.
  const CostModel same = with_recompute(base, std::vector<StageSpec>(3));
  CHECK(same.per_stage == base.per_stage);
}

TEST_CASE("recompute_description names each run of stages alike, and nothing when no stage is checkpointed") {
  std::vector<StageSpec> spec(5);
  CHECK(recompute_description(spec).empty());
  spec[1].recompute = full(9);
  spec[2].recompute = full(9);
  spec[4].recompute.mode = Recompute::Mode::Selective;
  spec[4].recompute.cost = 0.25;
  CHECK(recompute_description(spec) ==
        "recompute: full on stages 1-2 (a re-run costs 1 x F; per microbatch B re-runs it once, I once, W 9 times); "
        "selective on stage 4 (a re-run costs 0.25 x F; per microbatch B re-runs it once, I once, W 1 time)");
}
