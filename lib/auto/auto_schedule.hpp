// The automatic schedule: the fastest schedule ppsched can find for a pipeline under a memory cap.
//
// Two sources of candidates, all measured with the timed simulator's model (sim/timed.hpp) and
// the simulator's memory accounting (sim/memory.hpp), so "fastest" and "fits" mean exactly what
// `ppsched simulate` reports:
//   - a greedy list scheduler (greedy.hpp): each rank, whenever it is free, runs the most
//     urgent action that is ready: an input-gradient backward I first (it is on the critical path
//     back to the first stage), then a forward F if its activation fits under the cap, then a
//     deferred weight-gradient W (it fills bubbles and frees memory). Variants differ in the cap
//     they aim for, whether W goes before F, which chunk's forward goes first, how much room a
//     first-chunk forward keeps, and whether a rank waits for a due I (GreedyPolicy, greedy.hpp); for V the
//     same scheduler also follows a handcrafted pattern's order, its bubbles squeezed. The
//     search runs them in order until its time budget is spent.
//   - the handcrafted families of the same shape that the registry marks for the search
//     (Family::auto_search_order: ZB-H1, ZB-H2, 1F1B, GPipe for one chunk per rank; ZBV, V-Half
//     and V-Min for two), kept when their simulated peak fits the cap.
// For V, when it costs at most a tenth of the budget left, an exploration round then runs the greedy's
// other switch combinations and squeezes each pattern with more windows; then come the rounds of
// the authors' V search (v_rounds.hpp), each pattern squeezed in unit time and replayed with the
// real costs, and below cap p the building blocks of the controllable-memory framework
// (v_blocks.hpp); last comes a local search on the best schedule (local_search.hpp), and on the
// best before those rounds when they found a better one and the budget pays for it; the local
// searches together take at most a twentieth of the budget.
// A greedy run (and a family replayed through it) gives up as soon as it can no longer finish by
// the best makespan found so far, so the likely winners go first (the order is in
// auto_schedule.cpp).
// "Fastest" follows the optimizer (AutoParams::optimizer): under sync an iteration costs the
// makespan; under post-validated, where consecutive iterations overlap, the longest rank span.
// The result is the fastest fitting candidate (ties: the other of the two times, i.e. less bubble
// inside the ranks under sync; then the less memory; then the earlier candidate), so it is never
// slower than a handcrafted family that fits the same cap. The search stops at the first
// candidate that reaches the objective's lower bound: nothing later could be faster.
//
// Placement: one stage per rank is loop placement; two is V placement (stage s and 2p-1-s on
// rank s), where a rank's forward of its second chunk reuses the microbatch it already holds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/schedule.hpp"
#include "sim/memory.hpp"
#include "sim/runtime.hpp"
#include "sim/timed.hpp"

namespace ppsched {

struct AutoParams {
  std::uint32_t ranks = 0;
  std::uint32_t microbatches = 0;
  std::uint32_t stages_per_rank = 1;  ///< 1 (loop) or 2 (V)
  double memory_cap = 0;              ///< per rank, in the memory model's unit; 0: no cap
  TimedOptions sim;                   ///< costs and comm, per stage (stages = ranks * stages_per_rank)
  MemoryModel memory;
  /// Bounds the greedy variants after the first (which runs unless a candidate before it already
  /// reaches the bound), the squeezed patterns, the exploration round and the local search.
  /// Counted as work (10M simulated actions per second), not read from a clock: the same input
  /// gives the same schedule.
  double time_budget_s = 1.0;
  /// What one iteration costs, so what the search minimises (sim/runtime.hpp): the makespan under
  /// sync, the longest rank span (the steady-state period of overlapping iterations) under
  /// post-validated. The lower bound, the give-up mark and the local search follow it.
  Optimizer optimizer = Optimizer::Sync;
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

/// The search. Throws std::invalid_argument for impossible parameters (no ranks, a cap below
/// one microbatch of activation, stages_per_rank other than 1 or 2).
AutoResult auto_schedule(const AutoParams& p);

}  // namespace ppsched
