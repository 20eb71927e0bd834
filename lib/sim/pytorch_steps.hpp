// PyTorch's lock-step dry run of a lowered schedule (`_simulate_comms_compute` in
// torch/distributed/pipelining/schedules.py): every action takes one step, every transfer takes
// no time, and a rank idles while its next action waits for another rank. The result is each
// rank's timeline, one action per step, an idle step where it waited, so that
// `to_pytorch_csv(simulate_pytorch_steps(...))` is byte for byte PyTorch's simulated CSV and the
// longest timeline is its "number of steps".
//
// The rules, as PyTorch applies them:
//
//   * Idle steps of the input are dropped first; only the order of each rank's actions matters.
//   * Each step visits the unfinished ranks in ascending order. A rank whose next action is ready
//     runs it (it is appended to the rank's timeline and counts as done at once, so a higher rank
//     visited later in the same step already sees it); otherwise the rank idles this step.
//   * Ranks with nothing left are then removed: a finished rank's timeline simply stops (no
//     trailing idles), and a rank with no actions at all has an empty timeline.
//   * Second pass: the ranks that idled this step, in ascending order, look at their next action
//     again; one that has become ready (its SEND ran on a higher rank earlier in this step, or on
//     a lower rank in this second pass) takes this step's slot instead of idling. So a RECV can run
//     in the same step as its SEND whichever of the two ranks is lower.
//   * Only the first pass counts as progress. A step in which no rank ran anything in the first
//     pass is a deadlock: PyTorch prints "WIP comms schedule:", the grid of the partial timeline
//     (this step's idles included) and "rank=<r> next action= <a>" for each unfinished rank, then
//     raises ValueError("Schedule is not progressing"). Here: SimDeadlock, with the same timeline
//     and stuck ranks. (PyTorch's grid printer itself crashes with IndexError when the partial
//     timeline has fewer steps than the schedule has ranks, e.g. a deadlock at the first step;
//     that is still this deadlock.) A schedule with ranks but no action at all deadlocks too, with
//     no rank stuck: PyTorch's loop runs while it has ranks, empty ones included, and nothing runs
//     in its first step. A schedule with no ranks gives an empty result.
//
// Readiness of an action of stage s and microbatch m looks in the set of actions done on the rank
// that OWNS its stage, stage_to_rank[s], whichever rank runs it (in a well-formed schedule that is
// the same rank):
//
//   F       s == 0, or `s RECV_F m` or `(s-1) F m` done on stage_to_rank[s]
//   I, B    s == num_stages-1, or `s RECV_B m`, `(s+1) I m` or `(s+1) B m` done on stage_to_rank[s]
//   W       always (PyTorch does not check that its I ran)
//   SEND_F  `s F m` done on stage_to_rank[s]
//   SEND_B  `s I m` or `s B m` done on stage_to_rank[s]
//   RECV_F  `(s-1) SEND_F m` done on stage_to_rank[s-1] (the peer's rank)
//   RECV_B  `(s+1) SEND_B m` done on stage_to_rank[s+1] (the peer's rank)
//
// Actions compare by stage, kind and microbatch, a missing microbatch (`1F`) included, so a
// duplicated SEND is just another ready action, a RECV that no action waits for is harmless, and a
// missing SEND or RECV shows up as a deadlock. The done-set of a rank holds what that rank ran, so
// a stage placed on two ranks, or a stage_to_rank that disagrees with the schedule, behaves
// exactly as in PyTorch.
//
// What ppsched adds (PyTorch raises ValueError("Unsupported action type <a>") on these, so it
// cannot simulate its own runtime lowering nor DualPipeV):
//
//   UNSHARD, RESHARD, REDUCE_GRAD   always ready; one step each.
//   OVERLAP_F_B container           ready when every sub-action is ready by the rules above, each
//                                   against the owner of its own stage, all judged on the state
//                                   before the container runs (a sub-action cannot wait for its
//                                   sibling); one step; afterwards its sub-actions count as done on
//                                   the rank that ran it.
//
// Where PyTorch fails with a bare KeyError, UserError says what is wrong and ends with
// PyTorch's error; it is thrown when the simulation reaches the action, as PyTorch's is:
//
//   * a stage the action needs that has no rank: PyTorch looks up stage_to_rank of the action's own
//     stage before anything else (even for a W), then of the peer's stage for a RECV (stage -1 for
//     a RECV_F of stage 0, num_stages for a RECV_B of the last stage);
//   * stage_to_rank naming a rank the schedule does not have;
//   * a container that is not an OVERLAP_F_B with sub-actions, or a container among sub-actions
//     (PyTorch's stage -1; for OVERLAP_F_B this is where PyTorch stops even with sub-actions).
//
// Cost: linear in the output (the timelines, idle steps included): each rank keeps a cursor into
// its program, and the done-sets are a bit per kind in a (stage, microbatch) table for the rank
// that owns the stage (passes/key_table.hpp: an array, or a hash map when a microbatch far beyond
// the others makes the grid too big for the schedule), with a hash set behind it for anything
// else (an action run off its owner's rank, none at all). PyTorch takes each action off the front
// of a Python list (list.pop(0)), which makes its version quadratic in the length of a rank where
// this one is linear (both timed on 1F1B with 64 ranks and 16384 microbatches lowered with SEND/RECV:
// docs/bench.md, "The 6.2M-action schedule"). A schedule that finishes, every action on its stage's
// rank, is not even run step by step: its actions are placed by their moments (step_moments.hpp),
// linear in the input, on two threads from a million steps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/schedule.hpp"
#include "ir/step_timelines.hpp"

namespace ppsched {

/// The simulation made no progress: PyTorch's ValueError("Schedule is not progressing").
class SimDeadlock : public std::runtime_error {
 public:
  /// A rank that could not run its next action.
  struct Stuck {
    std::uint32_t rank;
    std::size_t step;  ///< index of that action in the rank's input program, idle steps counted
  };

  SimDeadlock(Schedule partial, std::vector<Stuck> stuck)
      : std::runtime_error("Schedule is not progressing"), partial_(std::move(partial)), stuck_(std::move(stuck)) {}

  /// The timelines up to and including the step that made no progress (PyTorch's "WIP comms
  /// schedule"); finished ranks' timelines end where they finished.
  const Schedule& partial() const { return partial_; }
  /// The unfinished ranks, ascending, each with the input index of its next action.
  const std::vector<Stuck>& stuck() const { return stuck_; }

 private:
  Schedule partial_;
  std::vector<Stuck> stuck_;
};

/// Runs PyTorch's `_simulate_comms_compute` on `s` (plus the extensions above) and returns the
/// timelines: rank r's program is rank r's timeline, one action per step, Idle where it waited.
/// The result keeps s's sub-action table, sizes and placement, with num_stages set to `num_stages`.
/// `stage_to_rank` is indexed by stage (kUnplaced marks a stage with no rank); `num_stages` only
/// says which stage is the last. Throws SimDeadlock when a step makes no progress, and
/// UserError where PyTorch fails with a KeyError (see above), and std::length_error
/// when the grid passes `max_cells` cells (ranks x steps; 16M by default, 128 MiB of timelines;
/// 1F1B over 64 ranks and 16384 microbatches lowered with comms needs 7.4M):
/// a dependency chain across many ranks makes the lock-step grid grow quadratically.
/// A schedule that finishes, every action on its stage's rank, is placed action by action
/// (step_moments.hpp) rather than step by step, with the same result; `lock_step_only` runs the
/// lock-step loop anyway (for tests that compare the two).
inline constexpr std::size_t kDefaultMaxStepCells = std::size_t{16} << 20;
Schedule simulate_pytorch_steps(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                std::uint32_t num_stages, std::size_t max_cells = kDefaultMaxStepCells,
                                bool lock_step_only = false);
/// simulate_pytorch_steps's timelines, as where each rank waited (ir/step_timelines.hpp): what a
/// writer reads them from without building them (write_pytorch_csv's overload). Throws as
/// simulate_pytorch_steps. `microbatches` is microbatches_in_use(s) where the caller knows it
/// already (0: found here, a pass over `s`).
StepWaits pytorch_step_waits(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                             std::uint32_t num_stages, std::size_t max_cells = kDefaultMaxStepCells,
                             std::uint32_t microbatches = 0, bool lock_step_only = false);
/// Builds the timelines `waits` puts on the ranks of `programs` into `out`'s programs, and states
/// `num_stages` in `out`, as simulate_pytorch_steps's result does; `out` may be `programs` itself:
/// each rank's timeline replaces its program once built, so a long dry run never holds the schedule
/// and its timelines whole at once.
void put_step_timelines(const Schedule& programs, const StepWaits& waits, std::uint32_t num_stages, Schedule& out);

}  // namespace ppsched
