#include "model/recompute.hpp"

#include <fmt/format.h>

#include "model/comm.hpp"
#include "model/costs.hpp"

namespace ppsched {

std::string_view recompute_mode_name(Recompute::Mode mode) {
  switch (mode) {
    case Recompute::Mode::None:
      return "none";
    case Recompute::Mode::Full:
      return "full";
    case Recompute::Mode::Selective:
      return "selective";
  }
  return "none";
}

std::uint32_t recomputes_of(const Recompute& r, bool first_stage, ActionKind kind) {
  if (!r.active()) return 0;
  switch (kind) {
    case ActionKind::B:
      return 1;
    case ActionKind::I:
      return first_stage ? 0 : 1;
    case ActionKind::W:
      return first_stage ? 1 : r.weight_groups;
    default:
      return 0;
  }
}

std::string recompute_description(const std::vector<StageSpec>& spec) {
  std::string out;
  auto alike = [](const Recompute& a, const Recompute& b) {
    return a.mode == b.mode && a.cost == b.cost && a.weight_groups == b.weight_groups;
  };
  for (std::size_t first = 0; first < spec.size();) {
    std::size_t last = first;
    while (last + 1 < spec.size() && alike(spec[last + 1].recompute, spec[first].recompute)) ++last;
    const Recompute& r = spec[first].recompute;
    if (r.active()) {
      out += out.empty() ? "recompute: " : "; ";
      out += fmt::format(
          "{} on stage{} {} (a re-run costs {:g} x F; per microbatch B re-runs it once, I once, W {} "
          "time{})",
          recompute_mode_name(r.mode), first == last ? "" : "s",
          first == last ? fmt::format("{}", first) : fmt::format("{}-{}", first, last), r.cost, r.weight_groups,
          r.weight_groups == 1 ? "" : "s");
    }
    first = last + 1;
  }
  return out;
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
