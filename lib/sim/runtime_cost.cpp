#include "sim/runtime_cost.hpp"

#include <fmt/format.h>

namespace ppsched {

RuntimeCost cost_under_runtime(Schedule compute_only, const RankingRule& rule, const TimedOptions& sim,
                               const MemoryModel& memory) {
  RuntimeCost out;
  // PyTorch's slots depend on the order of each rank's F, I, B and W only, which lowering keeps:
  // the compute-only schedule, shorter than the lowered one, gives the same count.
  std::uint32_t slots = 0;
  if (rule.liveness) {
    try {
      slots = activation_liveness(compute_only, compute_only.placement.stage_to_rank, compute_only.num_microbatches,
                                  *rule.liveness)
                  .peak;
    } catch (const LivenessError& e) {
      out.note = fmt::format("PyTorch's activation liveness cannot analyse rank {}'s order: {}", e.rank(), e.what());
      out.given = std::move(compute_only);
      return out;
    }
  }
  PreparedSchedule prepared;
  try {
    prepared = prepare_schedule(std::move(compute_only), {}, rule.how);
  } catch (const PreparationError& e) {
    out.note = std::string("PyTorch's runtime lowering rejects it: ") + e.what();
    out.given = e.input();
    return out;
  }
  TimedOptions opt = sim;
  opt.blocking_comms = rule.blocking_comms;
  try {
    const SimAnalysis a =
        simulate_runtime(prepared.as_run(), prepared.given.placement.stage_to_rank, opt, memory, rule.model);
    out.ran = true;
    out.makespan = iteration_time(a, Optimizer::Sync);
    out.span = iteration_time(a, Optimizer::PostValidated);
    out.iteration_time = iteration_time(a, rule.model.optimizer);
    double busy = 0;
    for (const RankUsage& u : a.ranks) busy += u.busy, out.comm_wait += u.comm_wait;
    // Under sync the global bubble; under post-validated its share of the steady-state period.
    out.bubble =
        out.iteration_time > 0 && !a.ranks.empty() ? 1 - busy / (double(a.ranks.size()) * out.iteration_time) : 0;
    out.peak = rule.liveness ? slots : a.memory.max_peak();
    out.fits = fits_under_cap(out.peak, rule.memory_cap);
  } catch (const TimedDeadlock&) {
    out.note = "its schedule does not finish";
  }
  out.given = std::move(prepared.given);
  return out;
}

bool ranks_ahead(const RuntimeCost& a, const RuntimeCost& b, Optimizer objective) {
  if (a.fits != b.fits) return a.fits;
  if (a.ran != b.ran) return a.ran;
  if (!a.ran) return false;
  // Exact comparisons: the simulation is deterministic, so a schedule ranked here and again by
  // tune gets the same figures, and a tolerance could only let a slower one through.
  const bool sync = objective == Optimizer::Sync;
  const double first_a = sync ? a.makespan : a.span, first_b = sync ? b.makespan : b.span;
  if (first_a != first_b) return first_a < first_b;
  const double second_a = sync ? a.span : a.makespan, second_b = sync ? b.span : b.makespan;
  if (second_a != second_b) return second_a < second_b;
  return a.peak < b.peak;
}

}  // namespace ppsched
