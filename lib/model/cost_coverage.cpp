#include "model/cost_coverage.hpp"

#include <bit>

namespace ppsched {

void CostCoverage::add(std::uint32_t stage, ActionKind kind) {
  if (stage >= given.size()) given.resize(std::size_t{stage} + 1, 0);
  given[stage] |= kind_bit(kind);
}

std::vector<KindSet> compute_kinds_by_stage(const Schedule& s, std::uint32_t stages) {
  std::vector<KindSet> kinds(stages, 0);
  auto note = [&](const Action& a) {
    if (a.has_stage() && a.stage < stages) kinds[a.stage] |= kind_bit(a.kind) & kComputeKinds;
  };
  for (const RankProgram& r : s.ranks)
    for (const Action& a : r.actions) {
      if (a.is_container()) [[unlikely]] {
        for (const Action& sub : s.subs(a)) note(sub);
      } else if (!a.is_idle()) {
        note(a);
      }
    }
  return kinds;
}

std::vector<KindSet> every_compute_kind(std::uint32_t stages) { return std::vector<KindSet>(stages, kComputeKinds); }

std::vector<KindSet> forward_on_every_stage(std::uint32_t stages) {
  return std::vector<KindSet>(stages, kind_bit(ActionKind::F));
}

std::optional<MissingCost> first_missing_cost(std::span<const KindSet> needed, const CostCoverage& given) {
  for (std::uint32_t stage = 0; stage < needed.size(); ++stage) {
    const KindSet missing = needed[stage] & ~given.at(stage);
    if (missing == 0) continue;
    if (given.at(stage) == 0) return MissingCost{stage, std::nullopt};
    for (ActionKind k : {ActionKind::F, ActionKind::B, ActionKind::I, ActionKind::W})
      if (missing & kind_bit(k)) return MissingCost{stage, k};
  }
  return std::nullopt;
}

std::size_t count_missing_costs(std::span<const KindSet> needed, const CostCoverage& given) {
  std::size_t n = 0;
  for (std::uint32_t stage = 0; stage < needed.size(); ++stage)
    n += static_cast<std::size_t>(std::popcount(needed[stage] & ~given.at(stage)));
  return n;
}

}  // namespace ppsched
