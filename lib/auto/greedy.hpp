// The greedy list scheduler of the automatic search (internal to lib/auto; the public entry
// is greedy_schedule in auto_schedule.hpp, and GreedyPolicy there says what a variant changes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "auto/shape.hpp"
#include "ir/action.hpp"

namespace ppsched::auto_detail {

struct GreedyRun {
  bool finished = false;  ///< every action placed
  bool gave_up = false;   ///< stopped early: some rank could no longer finish by the mark
  /// Stopped: the guide was cut short (GreedyPolicy::guide_is_prefix) and the run would have read
  /// past the cut. Run it again with more of the guide.
  bool guide_exhausted = false;
  /// When finished: the makespan, the highest per-rank peak and the longest rank span, exactly as
  /// the timed simulator and compute_memory measure them (a test checks the two agree).
  double makespan = 0, peak = 0, span = 0;
  std::vector<std::vector<Action>> programs;  ///< per rank, when finished
  std::size_t placed = 0;                     ///< actions placed before it finished, gave up or got stuck
  std::size_t copied = 0;                     ///< of those, copied from a repeating period (not decided)
  /// With a guide and GreedyPolicy::shadow_lookahead: a run with that wider window would have made
  /// every decision this one made, at the same times (so it would build the same schedule, or give
  /// up at the same point under the same mark).
  bool same_with_shadow_lookahead = false;
};

/// The end times of every forward and input gradient, stage by stage (stages x microbatches each):
/// a search passes the same buffers to all its runs, which saves allocating and touching megabytes
/// per run at large sizes (docs/bench.md). A run reads only the entries it has written.
struct GreedyBuffers {
  std::vector<double> f_end, i_end;
  /// Storage a run leaves to the next: the per-rank programs of a run that did not finish (a
  /// finished one hands them over), and a guided run's marks. Freed and allocated again, they
  /// cost page faults, as the allocator gives the memory back to the system in between
  /// (docs/bench.md).
  std::vector<std::vector<Action>> programs;
  std::vector<std::vector<std::uint8_t>> done;
};

/// Runs one greedy variant. It gives up once some rank's current end plus the work it has left is
/// past `give_up_above` (the search passes the best makespan so far).
GreedyRun greedy_run(const Shape& shape, const GreedyPolicy& policy, double give_up_above = kNever,
                     GreedyBuffers* buffers = nullptr);

}  // namespace ppsched::auto_detail
