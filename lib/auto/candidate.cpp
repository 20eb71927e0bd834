// Measuring a candidate (candidate.hpp).
#include "auto/candidate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "auto/shape.hpp"
#include "sim/aggregate.hpp"
#include "sim/memory.hpp"

namespace ppsched::auto_detail {

AutoCandidate simulate_candidate(std::string origin, const Schedule& s, const AutoParams& p) {
  AutoCandidate c;
  c.origin = std::move(origin);
  std::optional<SimAnalysis> a = try_simulate_aggregates(s, s.placement.stage_to_rank, p.sim, p.memory);
  if (!a) {
    c.why_not = "does not finish";
    return c;
  }
  c.makespan = a->makespan;
  c.peak = a->memory.max_peak();
  for (const RankUsage& u : a->ranks) c.span = std::max(c.span, u.last_action_end - u.first_action_start);
  judge_fit(c, p);
  return c;
}

void judge_fit(AutoCandidate& c, const AutoParams& p) {
  c.fits = fits_under_cap(c.peak, p.memory_cap);
  if (!c.fits) c.why_not = fmt::format("peak memory {:.4g} is over the cap {:.4g}", c.peak, p.memory_cap);
}

}  // namespace ppsched::auto_detail
