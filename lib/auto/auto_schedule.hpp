// The automatic schedule: the fastest schedule ppsched can find for a pipeline under a memory cap.
//
// Two sources of candidates, all measured with the timed simulator's model (sim/timed.hpp) and
// the simulator's memory accounting (sim/memory.hpp), so "fastest" and "fits" mean exactly what
// `ppsched simulate` reports:
//   - a greedy list scheduler (greedy_schedule): each rank, whenever it is free, runs the most
//     urgent action that is ready: an input-gradient backward I first (it is on the critical path
//     back to the first stage), then a forward F if its activation fits under the cap, then a
//     deferred weight-gradient W (it fills bubbles and frees memory). Variants differ in the cap
//     they aim for, whether W goes before F, which chunk's forward goes first, how much room a
//     first-chunk forward keeps, and whether a rank waits for a due I (GreedyPolicy); for V the
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
#include <limits>
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

/// A greedy variant (see the file comment).
struct GreedyPolicy {
  /// The memory it aims to stay under (<= the real cap; <= 0: none, as fits_under_cap reads a cap).
  double target_cap = 0;
  bool weight_first = false;     ///< W before F when no I is ready
  bool late_chunk_first = true;  ///< V: the forward of the higher stage first
  /// V: a first-chunk forward keeps room for its own second-chunk forward (each microbatch in
  /// flight holds two chunks' worth), or, when false, only for one second-chunk forward at a time
  /// (enough to keep the pipeline moving; at tight caps it lets more microbatches into the rank)
  bool reserve_each = true;
  /// When set: a rank prefers the order of this schedule's program (a handcrafted pattern of the
  /// same shape) and, while its next action there is not ready, runs the first ready action among
  /// the next `lookahead` ones (under the cap): the pattern, with its bubbles squeezed.
  const Schedule* guide = nullptr;
  std::uint32_t lookahead = 0;
  /// With a guide: once a rank has run all its forwards, it leaves the guide and decides as the
  /// unguided greedy does (a ready I first, then a deferred W). The patterns fix the cool-down's
  /// W slots for equal F, I and W; when an I costs more, a W in the pattern's place can hold up
  /// the I chain back to stage 0, where a W taken only while no I is ready fills the wait.
  bool free_cooldown = false;
  /// Keep the input-gradient chain moving: a forward or a W is not started when it would still be
  /// running at the time a known I of the rank becomes ready (the rank waits for the I instead).
  /// A plain list scheduler starts whatever is ready, and a forward taken just before an I
  /// arrives delays every stage below on the way back to stage 0.
  bool wait_for_input_grad = false;
  /// With wait_for_input_grad: only a forward waits for a due I; a W still runs whenever nothing
  /// else can. A W held back leaves its rank idle, and the time it would have delayed an input
  /// gradient by is usually filled by the deferred W's of the ranks below.
  bool only_forwards_wait = false;
  /// With only_forwards_wait: a W still waits for a due I while the rank's idle time, that wait
  /// included, stays within the most any rank has idled so far: idle time is spread over the
  /// ranks rather than piled on the ones that wait, as the Zero Bubble authors' zb.py balances
  /// each stage's bubble against the largest.
  bool balance_idle = false;
  /// Right after an input gradient (no F or I since, W's aside), a forward that is ready and fits
  /// goes before a ready input gradient: forwards and input gradients alternate once the first I
  /// has arrived, so that the next stage gets its input in time. Under the input-gradient-first
  /// rule a rank whose I's keep arriving runs them back to back and its successor waits for
  /// forwards (filling the wait with W's it would rather keep for the cool-down). This is the
  /// steady state of the Zero Bubble paper's schedules, where each stage's backward follows the
  /// forward of a later microbatch.
  bool forward_after_input_grad = false;
  /// V: a first-chunk forward or a W is not started when it would still be running at the time the
  /// rank's next second-chunk forward is ready (and fits): the second chunk's forwards lead to the
  /// loss and back into the input-gradient chain, so with a transfer time between ranks a
  /// first-chunk forward taken just before one arrives delays every stage after it (the Zero
  /// Bubble authors' V search runs first-chunk forwards in the warm-up only while they end before
  /// the second chunk's input can arrive).
  bool wait_for_late_forward = false;
  /// A forward that is ready but does not fit makes room first: the oldest W runs before a ready
  /// input gradient. Under the input-gradient-first rule a full rank frees memory only as far as
  /// its I's do (M_B - M_W each: nothing when M_W = M_B), so a microbatch past what the cap holds
  /// (m = p + 1 at cap p) would wait for the cool-down's W's.
  bool make_room_first = false;
  /// V: when both chunks have an input gradient ready, run the first chunk's (the lower stage, on
  /// the way back to stage 0) rather than the second's. The Zero Bubble authors' V search does
  /// so; at m = p, where the cool-down is much of the run, it can end the I chains sooner.
  bool first_chunk_input_grad_first = false;
  /// With a guide: also check, at every step, whether a window of this many actions (more than
  /// `lookahead`) would have decided the same; the search then skips that wider run when it would
  /// only repeat this one. Changes nothing in this run.
  std::uint32_t shadow_lookahead = 0;
  /// Once the decisions repeat (the steady state), copy whole periods of them instead of deciding
  /// each again: the same schedule, made faster; only when every time is exact (greedy.cpp). Off
  /// only in tests, to compare.
  bool copy_steady_state = true;
  /// The guide's programs are only the start of the pattern's (synthesize_prefix): a run that
  /// would read past the end of one stops there, unfinished, so that it never decides on less
  /// than the whole pattern would show it (greedy_schedule returns false).
  bool guide_is_prefix = false;

  /// Every switch, cap and window alike (the search keeps a variant once: exploration_variants).
  bool operator==(const GreedyPolicy&) const = default;
};

/// Builds a schedule by greedy list scheduling. Returns false (and leaves `out` unspecified) when
/// the policy gets stuck, which a cap below one microbatch's activation causes, or when it can
/// no longer finish by `give_up_above`: it stops once some rank's current end plus the work it
/// has left passes that mark (the search passes the best makespan so far).
bool greedy_schedule(const AutoParams& p, const GreedyPolicy& policy, Schedule& out, double& makespan,
                     double give_up_above = std::numeric_limits<double>::infinity());

/// What `c` costs per iteration under `o`: its makespan (sync) or its longest rank span
/// (post-validated), the search's objective.
inline double iteration_time(const AutoCandidate& c, Optimizer o) { return o == Optimizer::Sync ? c.makespan : c.span; }

/// The search. Throws std::invalid_argument for impossible parameters (no ranks, a cap below
/// one microbatch of activation, stages_per_rank other than 1 or 2).
AutoResult auto_schedule(const AutoParams& p);

}  // namespace ppsched
