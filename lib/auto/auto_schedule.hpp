// The automatic schedule: the fastest schedule ppsched can find for a pipeline under a memory cap.
//
// Every candidate is measured with the timed simulator's model (sim/timed.hpp) and the
// simulator's memory accounting (sim/memory.hpp), so "fastest" and "fits" mean exactly what
// `ppsched simulate` reports. The candidates are the handcrafted families of the shape that the
// registry marks for the search (Family::auto_search_order), kept when they fit the cap; runs of a
// greedy list scheduler in many variants (auto/greedy.hpp), which for V also follows each pattern's
// order with its bubbles squeezed and replays orders built in other ways; and, last, a local search
// that moves single actions of the best. They come in rounds, each with its share of a work budget,
// in the order of the table in auto/rounds.cpp, which is their description (docs/design.md, "The
// automatic search").
//
// "Fastest" follows the optimizer (AutoParams::optimizer): under sync an iteration costs the
// makespan; under post-validated, where consecutive iterations overlap, the longest rank span.
// The result is the fastest fitting candidate (ties: the other of the two times, i.e. less bubble
// inside the ranks under sync; then the less memory; then the earlier candidate), so it is never
// slower than a handcrafted family that fits the same cap. The search stops at the first
// candidate that reaches the objective's lower bound: nothing later could be faster.
//
// This header is the search's public face, for app/ and lib/tune; the rest of lib/auto is
// internal (tests/layering_test.py keeps it so).
//
// Placement: one stage per rank is loop placement; two is V placement (stage s and 2p-1-s on
// rank s), where a rank's forward of its second chunk reuses the microbatch it already holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/schedule.hpp"
#include "sim/memory.hpp"
#include "sim/runtime.hpp"
#include "sim/runtime_cost.hpp"
#include "sim/timed.hpp"

namespace ppsched {

struct AutoParams {
  std::uint32_t ranks = 0;
  std::uint32_t microbatches = 0;
  std::uint32_t stages_per_rank = 1;  ///< 1 (loop) or 2 (V)
  double memory_cap = 0;              ///< per rank, in the memory model's unit; 0: no cap
  TimedOptions sim;                   ///< costs and comm, per stage (stages = ranks * stages_per_rank)
  MemoryModel memory;
  /// The search's work budget: the rounds that it bounds stop once it is spent, and the costlier
  /// ones start only where what is left pays for them (auto/rounds.cpp). Counted as work (10M
  /// simulated actions per second), not read from a clock: the same input gives the same schedule.
  double time_budget_s = 1.0;
  /// What one iteration costs, so what the search minimises (sim/runtime.hpp): the makespan under
  /// sync, the longest rank span (the steady-state period of overlapping iterations) under
  /// post-validated. The lower bound, the give-up mark and the local search follow it.
  Optimizer optimizer = Optimizer::Sync;
  /// How the answer will be ranked (sim/runtime_cost.hpp): when given, the search's answer and
  /// every handcrafted family of this shape are costed under it and the best of them is the
  /// answer (auto/ranked.hpp), so that it is never slower than a family there. Its optimizer
  /// should be `optimizer`; its cap and memory rule decide what fits. Nullopt: the search's own
  /// model ranks.
  std::optional<RankingRule> ranked_by;
};

/// The placement style of the automatic schedule with `stages_per_rank` stages per rank: V for two,
/// loop for one (see the file comment). Whoever builds its costs or memory model places stages so.
constexpr PlacementStyle auto_placement(std::uint32_t stages_per_rank) {
  return stages_per_rank == 2 ? PlacementStyle::V : PlacementStyle::Loop;
}

/// One schedule the search considered.
struct AutoCandidate {
  std::string origin;   ///< "greedy (aim 4, W before F, late chunk first)", "ZBH1", "VHalf squeezed (...)", ...
  double makespan = 0;  ///< simulated; 0 when it did not finish
  double peak = 0;      ///< highest per-rank peak memory
  double span = 0;      ///< longest time from a rank's first start to its last end (bubble inside)
  bool fits = false;    ///< it finished and fits_under_cap(peak, the cap)
  std::string why_not;  ///< when it does not fit or could not be built
};

struct AutoResult {
  Schedule schedule;  ///< compute only (F, I, W), sizes and placement set
  AutoCandidate best;
  std::vector<AutoCandidate> tried;
};

/// What `c` costs per iteration under `o`: its makespan (sync) or its longest rank span
/// (post-validated), the search's objective.
inline double iteration_time(const AutoCandidate& c, Optimizer o) { return o == Optimizer::Sync ? c.makespan : c.span; }

/// The search. Throws UserError for impossible parameters (no ranks, a cap below
/// one microbatch of activation, stages_per_rank other than 1 or 2).
AutoResult auto_schedule(const AutoParams& p);

/// How many schedules a ranked search (AutoParams::ranked_by) costs under its runtime at
/// `stages_per_rank`: its own answer and each family of that shape. What tune counts as its work.
std::size_t ranked_schedules(std::uint32_t stages_per_rank);

}  // namespace ppsched
