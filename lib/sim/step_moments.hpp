// PyTorch's lock-step dry run (pytorch_steps.hpp) without its lock step, for a well-formed schedule.
//
// The lock-step loop visits every unfinished rank at every step, so its cost is the grid of ranks
// by steps (7.4M cells for 1F1B over 64 ranks and 16384 microbatches), each visit a readiness
// check. But where each action lands follows from where the actions it waits for landed. Call
// the moment an action runs (step, pass): pass 0 is a step's first visit of the ranks, in rank
// order; pass 1 its second, of the ranks that idled in the first. An action of rank r run at
// (t', p') on rank q is seen by a check of rank r at (t, p) exactly when (t', p', q) < (t, p, r).
// Then, with every action on the rank that owns its stage:
//
//   * what an action waits for on its own rank ran before it, at an earlier step: the action runs
//     at the step after its rank's previous action, in the first pass, or never (a deadlock);
//   * a RECV waits for its SEND on the peer's rank q, run at (t', p'): it runs at the first check
//     that sees it, no earlier than the step after its rank's previous action: (t', 0) when the
//     SEND ran in a first pass on a lower rank, (t', 1) in a first pass on a higher one or a
//     second on a lower one, (t' + 1, 0) in a second pass on a higher one.
//
// So each rank's actions are placed in program order, a RECV waiting until its SEND is placed,
// which costs a little per action instead of per cell. What PyTorch would refuse is left to the
// lock-step loop, which says it exactly: a rank that can never go on, a step with no first-pass
// progress (PyTorch's "not progressing", even when a second pass would have run something), an
// action off its stage's rank, a container, a stage with no rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/schedule.hpp"
#include "ir/step_timelines.hpp"

namespace ppsched {

/// The lock-step dry run's waits for `s`, when it finishes and is well-formed as above; nullopt
/// otherwise (the lock-step loop then runs, and says why). `microbatches` bounds every
/// microbatch of `s` (microbatches_in_use); `last_stage` is the pipeline's last stage.
///
/// A schedule of a million steps or more is placed by two threads, each owning half of the ranks
/// (ir/rank_halves.hpp): a RECV whose SEND is on the other half polls for it (halves_meeting.hpp).
/// `split_at` (for tests) splits the ranks there instead, whatever the size: the second thread
/// takes ranks split_at.. (0, or the rank count: as rank_halves decides).
std::optional<StepWaits> step_waits_by_moments(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                               std::int64_t last_stage, std::uint32_t microbatches,
                                               std::size_t split_at = 0);

}  // namespace ppsched
