// Local search on the automatic search's best schedule (local_search.hpp).
#include "auto/local_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <vector>

#include "auto/candidate.hpp"
#include "auto/incremental_times.hpp"
#include "auto/shape.hpp"
#include "sim/aggregate.hpp"
#include "sim/memory.hpp"

namespace ppsched::auto_detail {

// Local search on the best schedule found. A move takes one action of a rank and puts it up to
// kReach places earlier or later in that rank's program: a W earlier fills a bubble and frees
// memory sooner, a W later lets a forward or an input gradient on the critical path go first, and
// forwards or input gradients of different chunks trade places. Each move is measured (by the
// incremental timeline of incremental_times.hpp where it models the schedule, else by simulating
// it all) and kept when the schedule still finishes under the cap and is better in (makespan, then the sum of the
// ranks' finish times; under post-validated the longest rank span, then the sum of the spans): the
// second key lets the search cross the plateaus where one move cannot shorten the longest alone
// but frees a rank for the next. A move that breaks a dependency does not
// finish and is dropped. First improvement, pass after pass, until a pass changes nothing or the
// budget, or the share of it the caller allows, is spent; the result is never worse than what it
// started from.
namespace {

// The objective (the makespan, or under post-validated the longest rank span) and the sum over
// the ranks of what it takes the longest of (their finish times, or their spans).
struct Score {
  double time, sum;
};
// The score from each rank's first start and last end, whether simulated or re-timed.
struct ScoreFold {
  bool span;  // post-validated
  double longest = 0, sum = 0;
  void add(double first_start, double last_end) {
    const double x = span ? last_end - first_start : last_end;
    longest = std::max(longest, x);
    sum += x;
  }
  Score score(double makespan) const { return {span ? longest : makespan, sum}; }
};
Score score_of(const Schedule& s, const AutoParams& p, bool& fits) {
  fits = false;
  std::optional<SimAnalysis> a = try_simulate_aggregates(s, s.placement.stage_to_rank, p.sim, p.memory);
  if (!a) return {kNever, kNever};
  ScoreFold fold{p.optimizer == Optimizer::PostValidated};
  for (const RankUsage& u : a->ranks) fold.add(u.first_action_start, u.last_action_end);
  fits = fits_under_cap(a->memory.max_peak(), p.memory_cap);
  return fold.score(a->makespan);
}

bool improves(const Score& a, const Score& b) {
  const double eps = 1e-12 * std::max(1.0, b.time);
  if (a.time < b.time - eps) return true;
  return a.time <= b.time + eps && a.sum < b.sum - eps * 8;
}

// How the search measures a move: by the incremental timeline when the schedule is one it models
// (IncrementalTimes::of), else by simulating the whole schedule. try_move keeps the move and says
// true when the result fits under the cap and improves on `current`; else it leaves the schedule
// as it was. Either way it charges the budget for the work.
class MoveJudge {
 public:
  MoveJudge(const AutoParams& p, WorkBudget& budget, Schedule& s, bool incremental)
      : p_(p), budget_(budget), s_(s), times_(incremental ? IncrementalTimes::of(s, p) : std::nullopt) {
    bool fits = false;
    current_ = score_of(s, p, fits);
    if (times_)
      for (std::uint32_t r = 0; r < p.ranks; ++r) peaks_.push_back(times_->peak_if_moved(r, 0, 0));
  }

  bool try_move(std::uint32_t r, std::size_t from, std::size_t to) {
    return times_ ? try_incremental(r, from, to) : try_simulated(r, from, to);
  }

 private:
  bool try_incremental(std::uint32_t r, std::size_t from, std::size_t to) {
    // No rank can end sooner, and under post-validated none can start later either.
    if (!times_->can_start_sooner(r, from, to) &&
        (p_.optimizer == Optimizer::Sync || times_->first_starts_stand(r, from, to))) {
      budget_.spend(1);
      return false;
    }
    // A move that can raise rank r's memory (an allocation moved sooner, a free later) is
    // checked against the cap first, as many are over it; any other only once it improves. The
    // peak costs the window's length (IncrementalTimes::peak_if_moved).
    const double window = static_cast<double>(from < to ? to - from + 1 : from - to + 1);
    const double peak = times_->peak_if_moved(r, from, to);
    budget_.spend(window);
    const double held = times_->held(r, from);
    if ((to < from) == (held > 0) && held != 0 && !fits(r, peak)) return false;
    using Retimed = IncrementalTimes::Retimed;
    Retimed how = times_->move(r, from, to, true);
    // Stopped early, every rank ends no sooner than it says now, so the score now is a bound: it
    // turns down most moves (under post-validated, once every rank's first start is known).
    const bool turned_down = how == Retimed::NothingSooner && score_now_is_bound() && !improves(score_now(), current_);
    if (how == Retimed::NothingSooner && !turned_down) how = times_->finish();
    budget_.spend(static_cast<double>(times_->retimed() + p_.ranks));
    const Score moved = how == Retimed::Done ? score_now() : current_;
    if (how == Retimed::Done && improves(moved, current_) && fits(r, peak)) {
      budget_.spend(static_cast<double>(s_.ranks[r].actions.size()));  // keep() recounts the levels
      times_->keep();
      current_ = moved;
      peaks_[r] = peak;
      return true;
    }
    times_->undo();
    return false;
  }

  // Whether the schedule fits the cap with rank r's peak at `peak`.
  bool fits(std::uint32_t r, double peak) const {
    double highest = peak;
    for (std::uint32_t q = 0; q < p_.ranks; ++q)
      if (q != r) highest = std::max(highest, peaks_[q]);
    return fits_under_cap(highest, p_.memory_cap);
  }

  bool score_now_is_bound() const {
    for (std::uint32_t q = 0; q < p_.ranks && p_.optimizer == Optimizer::PostValidated; ++q)
      if (!times_->first_start_known(q)) return false;
    return true;
  }

  // The objective and its sum, as score_of computes them from a simulation.
  Score score_now() const {
    ScoreFold fold{p_.optimizer == Optimizer::PostValidated};
    double makespan = 0;
    for (std::uint32_t q = 0; q < p_.ranks; ++q) {
      fold.add(times_->first_start(q), times_->last_end(q));
      makespan = std::max(makespan, times_->last_end(q));
    }
    return fold.score(makespan);
  }

  bool try_simulated(std::uint32_t r, std::size_t from, std::size_t to) {
    std::vector<Action>& ops = s_.ranks[r].actions;
    move_action(ops, from, to);
    budget_.spend(static_cast<double>(s_.action_count()));
    bool fits = false;
    const Score c = score_of(s_, p_, fits);
    if (fits && improves(c, current_)) {
      current_ = c;
      return true;
    }
    move_action(ops, to, from);  // undo
    return false;
  }

  const AutoParams& p_;
  WorkBudget& budget_;
  Schedule& s_;
  std::optional<IncrementalTimes> times_;
  std::vector<double> peaks_;  // per rank, with the incremental timeline
  Score current_;
};

}  // namespace

double improve_locally(const AutoParams& p, WorkBudget& budget, Schedule& best, AutoResult& result, double most_work,
                       bool incremental) {
  constexpr std::ptrdiff_t kReach = 6;
  const double actions = static_cast<double>(best.action_count());
  // A pass tries up to 2 * kReach moves per action, each up to a whole simulation. When the budget
  // cannot pay for one pass, first improvement would only ever look at the first actions of the
  // first ranks, a corner of the schedule chosen by its numbering, not by where the bubbles are;
  // then the search is skipped, and the budget is not burnt on it (a larger --time-budget turns
  // it on).
  if (!budget.can_pay(actions * 2 * kReach * actions)) return 0;
  const double left_before = budget.left();
  auto used = [&] { return left_before - budget.left(); };
  auto stop = [&] { return budget.spent() || used() >= most_work; };
  MoveJudge judge(p, budget, best, incremental);
  std::size_t moves = 0;
  // A move turned down while the schedule has not changed since (no move kept: the same count of
  // kept moves) is turned down again, so it is not tried again: the last pass skips what it
  // tried after the last kept move, and an adjacent swap, tried from both of its actions, is
  // tried once. Per rank, per position and reach: 1 + the count of kept moves when turned down.
  constexpr std::ptrdiff_t kReaches = 2 * kReach + 1;
  std::vector<std::vector<std::size_t>> turned_down(best.ranks.size());
  for (std::size_t r = 0; r < best.ranks.size(); ++r) turned_down[r].assign(best.ranks[r].actions.size() * kReaches, 0);
  auto seen = [&](std::size_t r, std::ptrdiff_t k, std::ptrdiff_t d) -> std::size_t& {
    return turned_down[r][static_cast<std::size_t>(k * kReaches + d + kReach)];
  };
  for (bool changed = true; changed && !stop();) {
    changed = false;
    for (std::uint32_t r = 0; r < best.ranks.size() && !stop(); ++r) {
      const auto& ops = best.ranks[r].actions;
      const auto n = static_cast<std::ptrdiff_t>(ops.size());
      for (std::ptrdiff_t k = 0; k < n && !stop(); ++k) {
        for (std::ptrdiff_t d = -kReach; d <= kReach && !stop(); ++d) {
          const std::ptrdiff_t to = k + d;
          if (d == 0 || to < 0 || to >= n || seen(r, k, d) == moves + 1) continue;
          // Never past the F or I of its own (stage, microbatch): that can only deadlock.
          const Action moved = ops[k];
          bool blocked = false;
          for (std::ptrdiff_t j = std::min(k, to); j <= std::max(k, to) && !blocked; ++j)
            blocked = j != k && ops[j].stage == moved.stage && ops[j].microbatch() == moved.microbatch();
          if (blocked) continue;
          if (judge.try_move(r, static_cast<std::size_t>(k), static_cast<std::size_t>(to))) {
            changed = true;
            ++moves;
            break;  // position k now holds another action: look at it afresh
          }
          seen(r, k, d) = moves + 1;
          if (d == 1 || d == -1) seen(r, to, -d) = moves + 1;  // the same swap
        }
      }
    }
  }
  if (moves == 0) return used();
  // Every kept move finished under the cap and was no slower, so the result is at least as good.
  AutoCandidate c = simulate_candidate(
      fmt::format("{} + {} local move{}", result.best.origin, moves, moves == 1 ? "" : "s"), best, p);
  const double before = iteration_time(result.best, p.optimizer);
  if (!c.fits || !(iteration_time(c, p.optimizer) <= before + 1e-12 * std::max(1.0, before))) return used();
  result.best = c;
  result.tried.push_back(c);
  return used();
}

}  // namespace ppsched::auto_detail
