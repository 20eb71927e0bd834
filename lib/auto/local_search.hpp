// The automatic search's work budget and its last step, local search on the best schedule found
// (internal to lib/auto).
#pragma once

#include "auto/auto_schedule.hpp"
#include "auto/shape.hpp"

namespace ppsched::auto_detail {

// The search's budget, counted in work rather than read from a clock, so that the same input gives
// the same schedule on any machine: --time-budget seconds at a nominal 10M simulated actions per
// second (near what one core simulates: docs/bench.md). Each greedy run is charged
// the actions it placed (one that gave up part-way, only those) and each local-search move the
// actions it re-timed and replayed (a whole simulation: its action count); the handcrafted
// families, a few simulations per search, are not charged.
class WorkBudget {
 public:
  /// The nominal rate that turns --time-budget seconds into work.
  static constexpr double kActionsPerSecond = 1e7;
  explicit WorkBudget(double seconds) : left_(seconds * kActionsPerSecond) {}
  /// Charges `actions`; false once the budget is spent.
  bool spend(double actions) {
    left_ -= actions;
    return left_ >= 0;
  }
  bool spent() const { return left_ < 0; }
  bool can_pay(double actions) const { return left_ >= actions; }
  double left() const { return left_ > 0 ? left_ : 0.0; }

 private:
  double left_;
};

/// Moves single actions of `best` while the budget lasts and it has used less than `most_work` of
/// it, keeping each move that still fits the cap and improves (makespan, then the sum of the ranks'
/// finish times; see local_search.cpp). When a move was kept, `best` holds the result and the
/// result's best candidate and tried list say so. It runs only when the budget can pay for one
/// pass of whole simulations (the most a pass can cost). Returns the work it charged.
/// `incremental` false measures every move by simulating the whole schedule, as it does where the
/// incremental timeline does not apply: off only in tests, to compare the two.
double improve_locally(const AutoParams& p, WorkBudget& budget, Schedule& best, AutoResult& result,
                       double most_work = kNever, bool incremental = true);

}  // namespace ppsched::auto_detail
