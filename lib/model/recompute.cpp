#include "model/recompute.hpp"

#include "model/comm.hpp"
#include "model/costs.hpp"

namespace ppsched {

std::string_view recompute_mode_name(Recompute::Mode mode) {
  switch (mode) {
    case Recompute::Mode::None: return "none";
    case Recompute::Mode::Full: return "full";
    case Recompute::Mode::Selective: return "selective";
  }
  return "none";
}

std::uint32_t recomputes_of(const Recompute& r, bool first_stage, ActionKind kind) {
  if (!r.active()) return 0;
  switch (kind) {
    case ActionKind::B: return 1;
    case ActionKind::I: return first_stage ? 0 : 1;
    case ActionKind::W: return first_stage ? 1 : r.weight_groups;
    default: return 0;
  }
}

CostModel with_recompute(const CostModel& costs, const std::vector<StageSpec>& spec) {
  CostModel out = costs;
  for (std::size_t st = 0; st < spec.size() && st < out.per_stage.size(); ++st) {
    const Recompute& r = spec[st].recompute;
    if (!r.active()) continue;
    KindCosts& c = out.per_stage[st];
    const double once = r.cost * c[static_cast<std::size_t>(ActionKind::F)];
    for (ActionKind k : {ActionKind::B, ActionKind::I, ActionKind::W})
      c[static_cast<std::size_t>(k)] += once * recomputes_of(r, st == 0, k);
  }
  return out;
}

}  // namespace ppsched
