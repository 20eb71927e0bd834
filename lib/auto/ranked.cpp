#include "auto/ranked.hpp"

#include <fmt/format.h>

#include <optional>

#include "ir/user_error.hpp"
#include "sim/runtime_cost.hpp"
#include "synth/synth.hpp"

namespace ppsched::auto_detail {

// The families `tune` lists beside the automatic schedule of this shape: in its placement, at its
// stages per rank (a family of any stage count only from two up, as tune tries them).
std::vector<std::string_view> families_of_shape(std::uint32_t stages_per_rank) {
  std::vector<std::string_view> out;
  for (const Family& f : families()) {
    if (f.placement != auto_placement(stages_per_rank)) continue;
    const bool shape = f.fixed_stages_per_rank ? f.default_stages_per_rank == stages_per_rank : stages_per_rank >= 2;
    if (shape) out.push_back(f.name);
  }
  return out;
}

namespace {

AutoCandidate as_candidate(std::string origin, const RuntimeCost& c, const RankingRule& rule) {
  AutoCandidate out;
  out.origin = std::move(origin);
  out.makespan = c.ran ? c.makespan : 0;
  out.span = c.span;
  out.peak = c.peak;
  out.fits = c.fits;
  if (!c.ran)
    out.why_not = c.note;
  else if (!c.fits)
    out.why_not = fmt::format("over the cap under --runtime {}: peak {:.4g} > {:.4g}", runtime_name(rule.model.runtime),
                              c.peak, rule.memory_cap);
  return out;
}

}  // namespace

AutoResult rank_as_judged(const AutoParams& p, std::optional<AutoResult> searched) {
  const RankingRule& rule = *p.ranked_by;
  const std::string runtime(runtime_name(rule.model.runtime));
  AutoResult out;
  std::optional<RuntimeCost> best;
  std::string best_origin, search_origin = "none fits the cap under the search's memory model";
  bool search_fits = false;
  double search_time = 0;
  if (searched) {
    search_origin = searched->best.origin;
    best = cost_under_runtime(std::move(searched->schedule), rule, p.sim, p.memory);
    best_origin = search_origin;
    search_fits = best->fits;
    search_time = best->iteration_time;
    out.tried = std::move(searched->tried);
    out.tried.push_back(as_candidate(search_origin + " under --runtime " + runtime, *best, rule));
  }
  SynthParams sp;
  sp.ranks = p.ranks;
  sp.microbatches = p.microbatches;
  sp.stages_per_rank = p.stages_per_rank;
  for (std::string_view name : families_of_shape(p.stages_per_rank)) {
    Schedule s;
    try {
      s = synthesize(name, sp);
    } catch (const SynthError&) {
      continue;  // not of this size (tune's row for it says why)
    }
    RuntimeCost c = cost_under_runtime(std::move(s), rule, p.sim, p.memory);
    out.tried.push_back(as_candidate(fmt::format("{} under --runtime {}", name, runtime), c, rule));
    if (!best || ranks_ahead(c, *best, rule.model.optimizer)) {
      best = std::move(c);
      best_origin = std::string(name);
    }
  }
  if (!best || !best->fits) throw UserError(fmt::format("auto: no schedule fits the memory cap {:.4g}", p.memory_cap));
  // A family that wins says by how much, so that the answer reads as what it is.
  if (searched && best_origin != search_origin) {
    if (!search_fits)
      best_origin +=
          fmt::format(", where the search's own best ({}) does not fit under --runtime {}", search_origin, runtime);
    else if (best->iteration_time < search_time)
      best_origin += fmt::format(", {:.2f}% faster under --runtime {} than the search's own best ({})",
                                 100.0 * (1.0 - best->iteration_time / search_time), runtime, search_origin);
    else
      best_origin += fmt::format(
          ", as fast under --runtime {} as the search's own best ({}) and ahead on the tie-break (the other time, "
          "then the peak)",
          runtime, search_origin);
  }
  out.best = as_candidate(best_origin, *best, rule);
  out.schedule = std::move(best->given);
  return out;
}

}  // namespace ppsched::auto_detail

namespace ppsched {

std::size_t ranked_schedules(std::uint32_t stages_per_rank) {
  return 1 + auto_detail::families_of_shape(stages_per_rank).size();
}

}  // namespace ppsched
