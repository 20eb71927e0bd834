#include "model/cost_coverage.hpp"

#include "parse/pytorch_csv.hpp"
#include "support/catch.hpp"

using namespace ppsched;

namespace {

Schedule parse(std::string_view csv) {
  DiagnosticSink sink;
  auto p = read_pytorch_csv_text("s.csv", csv, {}, sink);
  REQUIRE(p);
  return std::move(p->schedule);
}

constexpr KindSet F = kind_bit(ActionKind::F), B = kind_bit(ActionKind::B), I = kind_bit(ActionKind::I),
                  W = kind_bit(ActionKind::W);

CostCoverage covering(std::vector<std::pair<std::uint32_t, ActionKind>> rows) {
  CostCoverage c;
  for (auto [stage, kind] : rows) c.add(stage, kind);
  return c;
}

}  // namespace

TEST_CASE("compute_kinds_by_stage: the compute kinds each stage runs, container parts included") {
  const Schedule s = parse("0F0,0F1,0I0,0W0,0SEND_F1,0B1\n1F0,(1F1;1B0)OVERLAP_F_B,1B1\n");
  const std::vector<KindSet> kinds = compute_kinds_by_stage(s, 3);
  REQUIRE(kinds.size() == 3);
  CHECK(kinds[0] == (F | B | I | W));  // SEND_F is priced by the topology, not the table
  CHECK(kinds[1] == (F | B));
  CHECK(kinds[2] == 0);  // a stage no action names needs nothing
  CHECK(compute_kinds_by_stage(s, 1).size() == 1);
  CHECK(every_compute_kind(2) == std::vector<KindSet>{kComputeKinds, kComputeKinds});
}

TEST_CASE("first_missing_cost: a stage with no row, then a stage without one kind it runs") {
  const std::vector<KindSet> needed = {F | I | W, F | I | W, F | B};
  CHECK_FALSE(first_missing_cost(needed, covering({{0, ActionKind::F},
                                                   {0, ActionKind::I},
                                                   {0, ActionKind::W},
                                                   {1, ActionKind::F},
                                                   {1, ActionKind::I},
                                                   {1, ActionKind::W},
                                                   {2, ActionKind::F},
                                                   {2, ActionKind::B}})));
  // The table of an 8-stage run given to a longer pipeline: the first stage it lacks, whole.
  auto m = first_missing_cost(needed, covering({{0, ActionKind::F}, {0, ActionKind::I}, {0, ActionKind::W}}));
  REQUIRE(m);
  CHECK(m->stage == 1);
  CHECK_FALSE(m->kind);
  // A stage with rows, but not for every kind it runs: the first missing kind in F, B, I, W order.
  m = first_missing_cost(
      needed,
      covering({{0, ActionKind::F}, {0, ActionKind::I}, {0, ActionKind::W}, {1, ActionKind::F}, {1, ActionKind::B}}));
  REQUIRE(m);
  CHECK(m->stage == 1);
  CHECK(m->kind == ActionKind::I);
  // B does not stand in for I and W, nor I and W for B: each is its own measurement.
  m = first_missing_cost(std::vector<KindSet>{F | B},
                         covering({{0, ActionKind::F}, {0, ActionKind::I}, {0, ActionKind::W}}));
  REQUIRE(m);
  CHECK(m->kind == ActionKind::B);
  // A row for a kind the stage does not need (a transfer) makes it present, not covered.
  m = first_missing_cost(std::vector<KindSet>{F}, covering({{0, ActionKind::SendF}}));
  REQUIRE(m);
  CHECK(m->kind == ActionKind::F);
  // Rows the schedule does not need are no gap.
  CHECK_FALSE(first_missing_cost(std::vector<KindSet>{F, 0}, covering({{0, ActionKind::F}, {0, ActionKind::B}})));
}

TEST_CASE("count_missing_costs counts (stage, kind) pairs") {
  const std::vector<KindSet> needed = {F | I | W, F | I | W, F | B};
  CHECK(count_missing_costs(needed, covering({})) == 8);
  CHECK(count_missing_costs(
            needed, covering({{0, ActionKind::F}, {0, ActionKind::I}, {0, ActionKind::W}, {2, ActionKind::B}})) == 4);
  CHECK(count_missing_costs({}, covering({})) == 0);
}
