// The timed model of a compute-only schedule, kept up to date while the local search moves its
// actions (internal to lib/auto; local_search.cpp): the fourth implementation of the timed model
// (sim/timed.hpp lists them; a unit test holds the four to the same times).
//
// The local search tries some 2 x 6 moves per action and pass, and simulating the whole schedule
// for each made it the search's main cost at small sizes (docs/bench.md, "Small sizes"). A move
// of one action within its rank changes only what runs after it: an action keeps its times unless
// something it waits for (its rank's previous action, its inputs from other stages) changed. So a
// move re-times only what started from the moved window on, and stops where nothing left waits for
// a time that changed. Most moves need no timing at all: one that cannot make any action start
// sooner cannot make any rank end sooner (can_start_sooner).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "auto/auto_schedule.hpp"
#include "ir/schedule.hpp"
#include "sim/memory.hpp"

namespace ppsched::auto_detail {

/// The local search's move: the action at `from` goes to `to`, those in between shift by one
/// (move_action(ops, to, from) undoes it).
inline void move_action(std::vector<Action>& ops, std::size_t from, std::size_t to) {
  if (from < to)
    std::rotate(ops.begin() + from, ops.begin() + from + 1, ops.begin() + to + 1);
  else
    std::rotate(ops.begin() + to, ops.begin() + from, ops.begin() + from + 1);
}

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

  enum class Retimed {
    Done,           ///< every time is the simulator's
    Stuck,          ///< the schedule can no longer finish (a cycle of waits)
    NothingSooner,  ///< stopped early: nothing left can start sooner than before (see move)
  };
  /// Moves rank `r`'s action at `from` to `to` (those in between shift by one) and re-times.
  /// With `stop_if_nothing_sooner` it may stop once the window is re-timed and nothing left can
  /// start sooner than before the move: every rank then ends no sooner than last_end says now
  /// (and, where first_start_known, starts at first_start), which is all a caller that looks for
  /// an improvement needs to turn most moves down; finish() completes the re-timing. Either way
  /// undo() restores the order and the times until the next move.
  Retimed move(std::uint32_t r, std::size_t from, std::size_t to, bool stop_if_nothing_sooner = false);
  /// Completes a re-timing that stopped early: Done or Stuck.
  Retimed finish();
  /// Keeps the last move (as does the next move); undo() then has nothing to restore.
  void keep();
  /// After a move stopped early: whether rank r's first start is its final one.
  bool first_start_known(std::uint32_t r) const;
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
  /// (from == to: as it is): the simulated peak, as every cost is positive (sequential_peak), up
  /// to the rounding of a sum taken in another order. It reads the kept order's running levels,
  /// so it costs the window's length, unless the last move, not yet kept, is rank r's: then the
  /// whole program is added up.
  double peak_if_moved(std::uint32_t r, std::size_t from, std::size_t to) const;
  /// By how much rank r's action at `step` changes its rank's memory (memory_delta).
  double held(std::uint32_t r, std::size_t step) const {
    const Action& a = program(r)[step];
    return a.is_idle() ? 0.0 : memory_delta(a.kind, act_[a.stage], wgt_[a.stage]).amount;
  }

 private:
  enum Class : std::uint32_t { kF = 0, kBwd = 1, kW = 2 };  // a B or an I is (s, m)'s backward
  IncrementalTimes() = default;

  std::size_t key(std::uint32_t c, std::uint32_t s, std::uint32_t m) const {
    return (std::size_t{c} * stages_ + s) * microbatches_ + m;
  }
  static std::uint32_t class_of(ActionKind kind) {
    return kind == ActionKind::F ? kF : kind == ActionKind::W ? kW : kBwd;
  }
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
  /// Starts re-timing, in the simulator's order (each rank runs its program as far as its inputs
  /// are there, a rank that waits woken by the action it waits for), every action that started at
  /// `since` or later and rank r's from position `lo` on; run_sweep goes on, and stops once rank r
  /// is at `until` and nothing left waits for a time that changed (the rest stands), or at the end.
  void begin_sweep(double since, std::uint32_t r, std::size_t lo, std::size_t until);
  Retimed run_sweep(bool stop_if_nothing_sooner);
  /// In the sweep under way: whether the action with key k has its final times (re-timed, or
  /// started before the sweep's `since`).
  bool there(std::size_t k) const { return (mark_[k] & ~kFlags) == stamp_ << kFlagBits || start_[k] < since_; }
  /// Puts back the times the last move logged, and forgets them.
  void restore_logged();
  /// Rank r's running memory levels in its program order (levels_, peak_before_, peak_after_).
  void count_levels(std::uint32_t r);

  Schedule* s_ = nullptr;
  std::uint32_t stages_ = 0, microbatches_ = 0;
  std::vector<std::uint32_t> rank_of_;    // per stage
  std::vector<double> fwd_in_, bwd_in_;   // transfer into stage s from s - 1, from s + 1
  std::vector<double> act_, wgt_, base_;  // M_B and M_W per stage, fixed memory per rank
  // Per key (class, stage, microbatch):
  std::vector<double> start_, end_, dur_;
  std::vector<std::uint8_t> has_;  // the schedule has this action
  static constexpr std::uint32_t kNoInput = UINT32_MAX;
  struct Waits {
    std::uint32_t in[2] = {kNoInput, kNoInput};  // the keys of its inputs from other stages
    double transfer[2] = {0.0, 0.0};             // from each
    std::uint32_t other_rank = 0;                // where the action waiting for it runs (its own when none)
    std::uint32_t data_successors = 0;           // the actions of other stages or kinds waiting for it
  };
  std::vector<Waits> waits_;
  // Per key: stamp_ << kFlagBits when the sweep under way has re-timed it, with kChanged when
  // its times changed and kSooner when it starts sooner than before.
  std::vector<std::uint32_t> mark_;
  static constexpr std::uint32_t kFlagBits = 2, kChanged = 1, kSooner = 2, kFlags = 3;
  std::uint32_t stamp_ = 0;
  std::vector<std::size_t> next_;        // per rank, in a sweep: the next action to time
  std::vector<std::size_t> hint_;        // per rank: where the last sweep began
  std::vector<std::size_t> blocked_on_;  // per rank, in a sweep: the key its next action waits for
  std::vector<std::uint32_t> runnable_;  // in a sweep: ranks that may go on
  static constexpr std::size_t kNoKey = SIZE_MAX;
  // The sweep under way (begin_sweep): where the times stand, the window, and the waits on
  // changed and on sooner times that no action has read yet.
  double since_ = 0;
  std::uint32_t window_rank_ = 0;
  std::size_t until_ = 0, pending_ = 0, pending_sooner_ = 0;
  struct Old {
    std::size_t k;
    double start, end;
  };
  // Per rank, per position j of the kept order: the level before action j, the peak up to there
  // (the base included), and the highest level after action j or a later one.
  std::vector<std::vector<double>> levels_, peak_before_, peak_after_;
  std::vector<Old> log_;  // the times the last move changed, as they were
  std::uint32_t moved_rank_ = 0;
  std::size_t moved_from_ = 0, moved_to_ = 0;
  bool has_move_ = false;
  std::size_t retimed_ = 0, actions_ = 0;
};

}  // namespace ppsched::auto_detail
