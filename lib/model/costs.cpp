#include "model/costs.hpp"

#include <algorithm>

namespace ppsched {

KindCosts unit_costs() {
  KindCosts c{};
  c[static_cast<std::size_t>(ActionKind::F)] = 1;
  c[static_cast<std::size_t>(ActionKind::I)] = 1;
  c[static_cast<std::size_t>(ActionKind::W)] = 1;
  c[static_cast<std::size_t>(ActionKind::B)] = 2;
  return c;
}

CostModel CostModel::uniform(std::uint32_t num_stages, std::uint32_t stages_per_rank, const KindCosts& per_rank) {
  CostModel m;
  KindCosts per_stage = per_rank;
  for (double& v : per_stage) v /= std::max<std::uint32_t>(1, stages_per_rank);
  m.per_stage.assign(num_stages, per_stage);
  return m;
}

CostModel CostModel::for_pipeline(std::uint32_t ranks, std::uint32_t stages, const KindCosts& per_rank) {
  return uniform(stages, ranks && stages >= ranks ? stages / ranks : 1, per_rank);
}

double CostModel::duration(const Schedule& s, const Action& a) const {
  if (a.is_idle()) return 0;
  if (!a.is_container()) return cost(a.stage, a.kind);
  double sum = 0;
  for (const Action& sub : s.subs(a)) sum += cost(sub.stage, sub.kind);
  return sum * overlap_factor;
}

}  // namespace ppsched
