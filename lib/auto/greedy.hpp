// The greedy list scheduler of the automatic search (internal to lib/auto): each rank, whenever it
// is free, runs the most urgent action that is ready: an input-gradient backward I first (it is on
// the critical path back to the first stage), then a forward F if its activation fits under the
// cap, then a deferred weight-gradient W (it fills bubbles and frees memory). What a variant
// changes is GreedyPolicy's; for V the same scheduler also follows a handcrafted pattern's order,
// its bubbles squeezed. Its times are the timed simulator's (sim/timed.hpp), computed in the same
// pass that builds the schedule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "auto/shape.hpp"
#include "ir/action.hpp"
#include "ir/schedule.hpp"

namespace ppsched::auto_detail {

/// A greedy variant: the cap it aims for, the order of the rules above and when a rank waits, and
/// optionally a pattern to follow (the search's variants: variants.hpp).
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

/// Builds a schedule by greedy list scheduling. Returns false (and leaves `out` unspecified) when
/// the policy gets stuck, which a cap below one microbatch's activation causes, or when it can
/// no longer finish by `give_up_above`: it stops once some rank's current end plus the work it
/// has left passes that mark (the search passes the best makespan so far).
bool greedy_schedule(const AutoParams& p, const GreedyPolicy& policy, Schedule& out, double& makespan,
                     double give_up_above = kNever);

}  // namespace ppsched::auto_detail
