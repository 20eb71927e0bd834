// The timed model of a compute-only schedule, kept up to date while the local search moves its
// actions (internal to lib/synth/auto; local_search.cpp).
//
// The local search tries some 2 x 6 moves per action and pass, and simulating the whole schedule
// for each made it the search's main cost at small sizes (docs/bench.md, "Small sizes"). A move
// of one action within its rank changes only what runs after it: an action keeps its times unless
// something it waits for (its rank's previous action, its inputs from other stages) changed. So a
// move re-times only what started from the moved window on, and stops where nothing left waits for
// a time that changed. Most moves need no timing at all: one that cannot make any action start
// sooner cannot make any rank end sooner (can_start_sooner).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ir/schedule.hpp"
#include "synth/auto/auto_schedule.hpp"

namespace ppsched::auto_detail {

/// Every action's start and end in a schedule of F, I, W and B only (and idle steps; implicit
/// comms, no shared device, every cost positive), as the timed simulator computes them, bit for
/// bit (a unit test compares the two on random moves), kept while actions move within their ranks.
class IncrementalTimes {
 public:
  /// The times of `s`, which moves rearrange in place (it must outlive the result). nullopt when
  /// `s` or `p` is outside what this models (another kind of action, a cost that is not positive,
  /// ranks sharing a device, a placement other than the search's) or `s` does not finish: the
  /// caller then simulates.
  static std::optional<IncrementalTimes> of(Schedule& s, const AutoParams& p);

  /// Moves rank `r`'s action at `from` to `to` (those in between shift by one) and re-times.
  /// False when the schedule can no longer finish (a cycle of waits). Either way undo() restores
  /// the order and the times until the next move.
  bool move(std::uint32_t r, std::size_t from, std::size_t to);
  void undo();
  /// Whether moving rank r's action at `from` to `to` could make any action start sooner. When
  /// not, every start stays or grows, so no rank ends sooner (its span can still shrink, as its
  /// first start may grow). Only two actions can gain by the move: the moved one, moved sooner
  /// (it no longer waits for the actions it passes), and the action after it, moved later (it no
  /// longer waits for it). One whose inputs arrive no sooner than its rank is free cannot start
  /// sooner, and then nothing can: whatever else the move changes only waits for more.
  bool can_start_sooner(std::uint32_t r, std::size_t from, std::size_t to) const;
  /// Whether every rank's first action keeps its start under that move: each started before the
  /// moved window's first action (so it waits for nothing the move changes) and is not in it.
  bool first_starts_stand(std::uint32_t r, std::size_t from, std::size_t to) const;
  /// The actions the last move re-timed (the work it cost).
  std::size_t retimed() const { return retimed_; }

  /// When rank r's action at `step` starts and ends.
  double start(std::uint32_t r, std::size_t step) const { return start_[key_of(program(r)[step])]; }
  double end(std::uint32_t r, std::size_t step) const { return end_[key_of(program(r)[step])]; }
  double first_start(std::uint32_t r) const;
  double last_end(std::uint32_t r) const;
  /// Rank r's peak memory, its events in program order, were its action at `from` moved to `to`
  /// (from == to: as it is): the simulated peak, as every cost is positive (sequential_peak).
  double peak_if_moved(std::uint32_t r, std::size_t from, std::size_t to) const;

 private:
  enum Class : std::uint32_t { kF = 0, kBwd = 1, kW = 2 };  // a B or an I is (s, m)'s backward
  IncrementalTimes() = default;

  std::size_t key(std::uint32_t c, std::uint32_t s, std::uint32_t m) const { return (std::size_t{c} * S_ + s) * M_ + m; }
  static std::uint32_t class_of(ActionKind kind) { return kind == ActionKind::F ? kF : kind == ActionKind::W ? kW : kBwd; }
  std::size_t key_of(const Action& a) const { return key(class_of(a.kind), a.stage, a.microbatch()); }
  std::vector<Action>& program(std::uint32_t r) const { return s_->ranks[r].actions; }
  /// The first position from `j` on that holds no idle step (the simulator skips them), or the end.
  static std::size_t next_busy(const std::vector<Action>& ops, std::size_t j) {
    while (j < ops.size() && ops[j].is_idle()) ++j;
    return j;
  }
  /// The last position before `j` that holds no idle step, or SIZE_MAX.
  static std::size_t next_busy_back(const std::vector<Action>& ops, std::size_t j) {
    while (j > 0 && ops[j - 1].is_idle()) --j;
    return j == 0 ? SIZE_MAX : j - 1;
  }
  /// When the inputs of `a` from other actions than its rank's previous one are there (the
  /// simulator's rule, with the current times).
  double inputs_ready(const Action& a) const;
  /// Re-times, in the simulator's order (each rank runs its program as far as its inputs are
  /// there), every action that started at `since` or later and rank r's from position `lo` on,
  /// and stops once rank r is at `until` and nothing left waits for a time that changed. False
  /// when stuck.
  bool sweep(double since, std::uint32_t r, std::size_t lo, std::size_t until);
  /// How many actions wait for the action of class c, stage s and microbatch m, at position j of
  /// its rank's program `ops`.
  std::size_t successor_count(std::uint32_t c, std::uint32_t s, std::uint32_t m, const std::vector<Action>& ops,
                              std::size_t j) const;
  /// Puts back the times the last move logged, and forgets them.
  void restore_logged();
  void reposition(std::uint32_t r, std::size_t lo, std::size_t hi);

  Schedule* s_ = nullptr;
  std::uint32_t S_ = 0, M_ = 0;
  std::vector<std::uint32_t> rank_of_;         // per stage
  std::vector<double> fwd_in_, bwd_in_;        // transfer into stage s from s - 1, from s + 1
  std::vector<double> act_, wgt_, base_;       // M_B and M_W per stage, fixed memory per rank
  // Per key (class, stage, microbatch):
  std::vector<double> start_, end_, dur_;
  std::vector<std::uint32_t> pos_;             // index in its rank's program
  std::vector<std::uint8_t> has_;              // the schedule has this action
  std::vector<std::uint32_t> touched_;         // stamp_ of the last sweep that re-timed it
  std::uint32_t stamp_ = 0;
  std::vector<std::uint32_t> changed_;         // stamp_ of the last sweep that changed its times
  std::vector<std::size_t> next_;              // per rank, in a sweep: the next action to time
  std::vector<std::size_t> blocked_on_;        // per rank, in a sweep: the key its next action waits for
  std::vector<std::uint32_t> runnable_;        // in a sweep: ranks that may go on
  struct Old {
    std::size_t k;
    double start, end;
  };
  std::vector<Old> log_;                       // the times the last move changed, as they were
  std::uint32_t moved_rank_ = 0;
  std::size_t moved_from_ = 0, moved_to_ = 0;
  bool has_move_ = false;
  std::size_t retimed_ = 0, actions_ = 0;
};

}  // namespace ppsched::auto_detail
