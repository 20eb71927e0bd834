// What a simulated schedule's time and memory went to: per-rank busy time, the idle time split by
// cause, both bubble ratios, and the memory profile. Views (report/sim_views.hpp) print it; the
// validator's thresholds (--max-bubble, --max-memory) compare against it.
#pragma once

#include <vector>

#include "ir/schedule.hpp"
#include "sim/memory.hpp"
#include "sim/timeline.hpp"

namespace ppsched {

/// What a rank's time went to; all in the timeline's unit.
struct RankUsage {
  double busy = 0;                       ///< compute stream busy time
  double first_start = 0, last_end = 0;  ///< compute actions of non-zero cost
  double warmup = 0, cooldown = 0, dependency_wait = 0, comm_wait = 0;
  double device_wait = 0;  ///< waiting for its turn on a device it shares with other ranks
  /// The start of the rank's first action in program order and the latest end of any of its
  /// actions, comms and zero-cost ones included (0 and 0 for a rank with no action).
  double first_action_start = 0, last_action_end = 0;
};

struct SimAnalysis {
  double makespan = 0;
  std::vector<RankUsage> ranks;
  double bubble_global = 0;     ///< 1 - total compute / (ranks x makespan)
  double bubble_per_stage = 0;  ///< Zero Bubble paper: max over ranks of (span - busy) / max span
  MemoryProfile memory;
};

SimAnalysis analyze(const Schedule& s, const Timeline& t, const MemoryModel& memory);

/// Whether two analyses agree exactly on every aggregate (the memory step function aside): what
/// simulate_aggregates (aggregate.hpp) promises against analyze().
bool same_aggregates(const SimAnalysis& a, const SimAnalysis& b);

}  // namespace ppsched
