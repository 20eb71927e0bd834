// The timed model's per-action rules that more than one file applies (timed.hpp says which files
// implement the model): how long an action runs, which actions count as busy compute time, and
// how the idle gap before a compute action is split into its causes, and the bubble ratios. Shared here so that the
// Timeline run (timed.cpp, then analysis.cpp) and the aggregate run (aggregate.cpp) agree bit for
// bit, the way memory_delta (memory.hpp) is the one memory rule. Not for the scheduling rules
// (who waits for what): those are the simulators' own loops.
#pragma once

#include <algorithm>
#include <cstdint>

#include "ir/schedule.hpp"
#include "model/costs.hpp"
#include "sim/analysis.hpp"

namespace ppsched {

/// How long a plain action (not a container) runs once started: its kind's cost on its stage. For
/// a loop that knows it holds no container (the check and the call it guards cost a hot loop).
inline double plain_action_duration(const CostModel& costs, const Action& a) { return costs.cost(a.stage, a.kind); }

/// How long `a` runs once started: a plain action as above, a container (OVERLAP_F_B) its
/// sub-actions' summed cost times the overlap factor (CostModel::duration, with the plain case
/// inline, as the simulators' inner loops take it).
inline double action_duration(const CostModel& costs, const Schedule& s, const Action& a) {
  return a.is_container() ? costs.duration(s, a) : plain_action_duration(costs, a);
}

/// The busy time an action of a compute stream that ran from `start` to `end` adds to its rank:
/// its length, or 0 when it does not count (a zero-length bookkeeping action, or a SEND or RECV
/// that blocking comms put on the compute stream). Positive exactly when it counts.
constexpr double busy_time(ActionKind kind, double start, double end) {
  const double length = end - start;
  return length > 0 && !is_send_recv(kind) ? length : 0.0;
}

/// What released a compute action (Timeline::released_by), as far as the bubble split asks.
enum class ReleaseCause : std::uint8_t {
  None,    ///< nothing: the action waited for no event
  Comm,    ///< a SEND or RECV
  Other,   ///< a compute action (its own rank's, or another's under implicit comms)
  Device,  ///< the action its shared device ran before it (Timeline::device_turn)
};

/// Adds the idle gap (> 0) before a compute action that starts at `start` to its rank's causes.
/// Released by a SEND or RECV: the part of the gap after its transfer began (`by_end` is then
/// that time, Timeline::transfer_begin) is waiting for the transfer; before it, the other end was
/// not posted yet (its data not computed, or its queue busy), which is waiting for a dependency,
/// so a free transfer adds no transfer time. Released by another rank's action that
/// ended before `start` (implicit comms): its transfer time covers the end of the gap, the rest
/// is waiting for a dependency. Released by its turn on a shared device: waiting for the device.
/// Anything else: waiting for a dependency.
constexpr void split_idle_gap(RankUsage& u, double gap, double start, ReleaseCause by, bool by_other_rank,
                              double by_end) {
  if (by == ReleaseCause::Device) {
    u.device_wait += gap;
  } else if (by == ReleaseCause::Comm) {
    const double transfer = std::clamp(start - by_end, 0.0, gap);
    u.comm_wait += transfer;
    u.dependency_wait += gap - transfer;
  } else if (by == ReleaseCause::Other && by_other_rank && by_end < start) {
    const double transfer = std::min(gap, start - by_end);
    u.comm_wait += transfer;
    u.dependency_wait += gap - transfer;
  } else {
    u.dependency_wait += gap;
  }
}

/// The bubble ratios of a run, folded rank by rank: close each rank's usage once its last end is
/// known (its cool-down, and its span and idle time inside the span), then set the ratios.
struct BubbleFold {
  double total_busy = 0, max_span = 0, max_gap = 0;

  /// Closes rank usage `u` in a run of length `makespan`; `any`: the rank ran a compute action.
  void add_rank(RankUsage& u, bool any, double makespan) {
    u.cooldown = any ? makespan - u.last_end : makespan;
    total_busy += u.busy;
    const double span = any ? u.last_end - u.first_start : 0;
    max_span = std::max(max_span, span);
    max_gap = std::max(max_gap, span - u.busy);
  }
  /// Global: 1 - compute / (ranks x makespan). Per stage (the Zero Bubble paper's): the largest
  /// idle time inside a rank's span over the largest span.
  void set_ratios(SimAnalysis& a, std::size_t ranks, double makespan) const {
    a.bubble_global = (ranks && makespan > 0) ? 1.0 - total_busy / (double(ranks) * makespan) : 0.0;
    a.bubble_per_stage = max_span > 0 ? max_gap / max_span : 0.0;
  }
};

}  // namespace ppsched
