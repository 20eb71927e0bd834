// The pipeline as the automatic search sees it (internal to lib/auto): placement, and each
// stage's costs and memory, resolved once per search and shared by the greedy and the search; the
// parameters a search takes, and a schedule of that shape from per-rank programs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "auto/auto_schedule.hpp"
#include "ir/action.hpp"
#include "ir/schedule.hpp"

namespace ppsched::auto_detail {

constexpr double kNever = std::numeric_limits<double>::infinity();
// Whether a peak fits under a cap is fits_under_cap's question (sim/memory.hpp), never these.
// Two amounts of memory (two candidates' peaks, two caps the greedy could aim for) this close
// count as equal: sums of fractions such as 1/2 are exact, 1/3 is not.
constexpr double kSameMemory = 1e-9;
// An action that ends this close after the time a rank waits for counts as ending in time
// (GreedyPolicy::wait_for_input_grad): the same rounding in sums of durations.
constexpr double kSameTime = 1e-9;

// The pipeline's shape and what each action costs and holds, resolved once per search.
struct Shape {
  std::uint32_t ranks, microbatches, v, stages;
  std::vector<std::uint32_t> rank_of;           // per stage
  std::vector<std::vector<std::uint32_t>> own;  // per rank: its stages, highest first
  std::vector<double> f, i, w;                  // durations per stage
  std::vector<double> backward;                 // min(I + W, B): the least a microbatch's backward can cost
  std::vector<double> act, wgt;                 // M_B and M_W per stage
  std::vector<double> fwd_xfer, bwd_xfer;       // into stage s from s-1 (forward), from s+1 (backward)
  std::vector<double> base;                     // per rank: fixed memory
  /// Every duration and transfer is a multiple of 1/1024 and no time can reach 2^40, so every time
  /// the greedy computes is exact, and shifting all of them by one amount changes no comparison
  /// (the steady-state copy in greedy.cpp relies on it).
  bool exact_times = false;
  /// The search minimises the longest rank span (Optimizer::PostValidated), not the makespan: a
  /// greedy run gives up once some rank's span, not its end, can no longer stay under the mark.
  bool span_objective = false;

  explicit Shape(const AutoParams& p)
      : ranks(p.ranks),
        microbatches(p.microbatches),
        v(p.stages_per_rank),
        stages(p.ranks * p.stages_per_rank),
        span_objective(p.optimizer == Optimizer::PostValidated) {
    rank_of.resize(stages);
    own.resize(ranks);
    for (std::uint32_t s = 0; s < stages; ++s) {
      rank_of[s] = v == 1 ? s : (s < ranks ? s : 2 * ranks - 1 - s);
      own[rank_of[s]].push_back(s);
    }
    for (auto& list : own) std::sort(list.rbegin(), list.rend());
    const double chunk = 1.0 / v;
    for (std::uint32_t s = 0; s < stages; ++s) {
      const auto st = static_cast<std::uint16_t>(s);
      f.push_back(p.sim.costs.cost(st, ActionKind::F));
      i.push_back(p.sim.costs.cost(st, ActionKind::I));
      w.push_back(p.sim.costs.cost(st, ActionKind::W));
      backward.push_back(std::min(i.back() + w.back(), p.sim.costs.cost(st, ActionKind::B)));
      act.push_back(s < p.memory.activation.size() ? p.memory.activation[s] : chunk);
      wgt.push_back(s < p.memory.weight_grad.size() ? p.memory.weight_grad[s] : act.back());
      fwd_xfer.push_back(s == 0 || rank_of[s - 1] == rank_of[s]
                             ? 0.0
                             : p.sim.comm.transfer_time(s - 1, true, rank_of[s - 1], rank_of[s]));
      bwd_xfer.push_back(s + 1 >= stages || rank_of[s + 1] == rank_of[s]
                             ? 0.0
                             : p.sim.comm.transfer_time(s + 1, false, rank_of[s + 1], rank_of[s]));
    }
    exact_times = true;
    double longest = 0;  // every time is the length of a chain of actions and transfers
    for (std::uint32_t s = 0; s < stages; ++s)
      for (double d : {f[s], i[s], w[s], fwd_xfer[s], bwd_xfer[s]}) {
        exact_times &= d >= 0 && d < 1e9 && std::ldexp(d, 10) == std::floor(std::ldexp(d, 10));
        longest += exact_times ? d * microbatches : 0.0;
      }
    exact_times &= longest < std::ldexp(1.0, 40);
    base.assign(ranks, 0.0);
    for (std::uint32_t r = 0; r < ranks && r < p.memory.fixed_per_rank.size(); ++r)
      base[r] = p.memory.fixed_per_rank[r];
  }
  // V placement: a rank's first chunk (stage < ranks) has a partner stage on the same rank whose
  // forward of the same microbatch must still fit when it arrives.
  bool first_chunk_of_v(std::uint32_t s) const { return v == 2 && s < ranks; }
  std::uint32_t partner(std::uint32_t s) const { return 2 * ranks - 1 - s; }
};

/// Throws UserError for parameters no search takes: no ranks or microbatches, stages
/// per rank other than 1 or 2, more stages than an action can name.
void check_params(const AutoParams& p);

/// A schedule of the search's shape (sizes, and loop or V placement: auto_placement) holding these
/// per-rank programs (the greedy's, or an order to replay).
Schedule schedule_of(const AutoParams& p, std::vector<std::vector<Action>>&& programs);

}  // namespace ppsched::auto_detail
