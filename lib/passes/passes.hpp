// Lowering passes: pure functions from schedule to schedule, as PyTorch's runtime applies them.
//
// Each pass returns a new schedule and never touches its input (PyTorch's own `_add_send_recv`
// and `_merge_bw` consume their arguments; these do not). Each is linear in the schedule size;
// PyTorch's `_add_unshard_reshard` is quadratic for V schedules because its look-ahead rescans the
// rest of the rank at every action (both timed on ZBV with 64 ranks and 2048 microbatches:
// docs/bench.md, "Synthesis and lowering").
//
// Output is byte-identical to PyTorch's passes at the corpus commit, including the order in which
// its Python `set` of active stages is iterated (python_set.hpp emulates CPython 3.11's table),
// and so is behaviour on malformed input: a container other than OVERLAP_F_B, or one with no
// sub-actions, acts as PyTorch's stage -1 (pytorch_view.hpp). Where PyTorch fails with a bare
// KeyError or assertion, PassError says what went wrong and ends with PyTorch's error.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/placement.hpp"
#include "ir/schedule.hpp"

namespace ppsched {

/// A pass could not run on its input (e.g. a compute order whose sends and receives cannot be
/// scheduled). what() says why; `stuck` lists, for a deadlock, each rank that could not progress
/// with the index of its head action in the input.
class PassError : public std::runtime_error {
 public:
  struct Stuck {
    std::uint32_t rank;
    std::size_t step;
  };
  PassError(const std::string& message, std::vector<Stuck> stuck = {})
      : std::runtime_error(message), stuck_(std::move(stuck)) {}
  const std::vector<Stuck>& stuck() const { return stuck_; }

  /// PyTorch follows some validation messages (an F/B/I/W out of order) with
  /// "\n\nFull pipeline schedule:\n" and its step grid, ` <-- ERROR HERE` on the failing step.
  /// what() is the message alone; this is the step to mark when printing the grid
  /// (report/pipeline_grid.hpp: format_pipeline_grid(schedule, *grid_step())).
  std::optional<std::size_t> grid_step() const { return grid_step_; }
  PassError& with_grid_step(std::size_t step) {
    grid_step_ = step;
    return *this;
  }

 private:
  std::vector<Stuck> stuck_;
  std::optional<std::size_t> grid_step_;
};

/// FSDP: before each compute action, RESHARD the active stages that are not among the next
/// `max_active_stages` distinct stages to compute (OVERLAP_F_B counts its sub-actions), then
/// UNSHARD those of them not active yet; RESHARD whatever is left at the end. Idle steps are
/// dropped. Per rank, PyTorch's `_add_unshard_reshard`. Evictions, and the final RESHARDs, come
/// in the order CPython iterates the set of active stages. As in PyTorch, `max_active_stages` 0
/// or less looks ahead to the end of the rank or its next OVERLAP_F_B; nullopt (Python's None)
/// to the end, and throws PassError (PyTorch: TypeError) on a rank with an OVERLAP_F_B. Linear
/// in the schedule times the stages per rank.
Schedule add_unshard_reshard(const Schedule& s, std::optional<std::int64_t> max_active_stages = 3);

/// PyTorch's `_defer_recv_ops` (the `defer_pp_recv` keyword, since about pytorch/pytorch#172668):
/// every RECV moves to just before the compute that consumes it, except that before a SEND to a
/// higher-numbered rank the RECVs held from that rank come first. Idle steps are dropped.
/// `stage_to_rank` must place every peer stage. Throws PassError for a RECV nothing consumes
/// (PyTorch's "leftover RECV ops" assertion).
Schedule defer_recv_ops(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank);

/// Appends `<stage>REDUCE_GRAD` right after the action that brings the count of B and W
/// actions of that stage (sub-actions of a container included; I does not count) to
/// `num_microbatches`. Idle steps are dropped. Per rank, PyTorch's `_add_reduce_grad`.
Schedule add_reduce_grad(const Schedule& s, std::uint32_t num_microbatches);

/// Inserts SEND_F/RECV_F and SEND_B/RECV_B between stages on different ranks, with PyTorch's
/// `_add_send_recv` round robin over ranks in ascending order (a RECV is appended to the
/// receiving rank's output when the SEND is emitted). Idle steps are dropped. `stage_to_rank`
/// must cover every stage index used (kUnplaced marks a hole); `num_stages` is the pipeline
/// depth. Throws PassError when a round makes no progress (PyTorch's "Malformed compute schedule,
/// can't schedule sends/recvs", with stuck()), when a stage it must look up has no rank, when a
/// RECV is for a rank the schedule lacks (PyTorch: KeyError), and on a rank with no steps at
/// all (PyTorch asserts). Linear in the output, times log(ranks).
Schedule add_send_recv(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank, std::uint32_t num_stages);

/// add_send_recv's two ways, which it chooses between and the tests hold to each other. By rounds
/// (send_recv_rounds.cpp): when each action is emitted, then each rank's output assembled, on two
/// threads for a large schedule; nullopt for what it leaves to the round robin (a container, a
/// SEND or RECV in the input, an action off its stage's rank or outside the pipeline, a duplicated
/// action, an empty rank, a schedule that cannot finish). The round robin itself (add_send_recv.cpp),
/// which takes any input and raises add_send_recv's errors.
std::optional<Schedule> add_send_recv_by_rounds(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                                std::uint32_t num_stages);
Schedule add_send_recv_round_robin(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                   std::uint32_t num_stages);

/// Merges an I followed (idle steps skipped) by a W of the same stage and microbatch into one
/// B. Idle steps are dropped. PyTorch's `_merge_bw`.
Schedule merge_bw(const Schedule& s);

/// PyTorch's `_validate_schedule`: the checks it makes, in its order, with its messages, and the
/// stage-to-rank map it infers. Throws PassError with PyTorch's message on the first failure
/// (its first line: PassError::grid_step() says where PyTorch's appended grid marks the error).
/// An F/B/I/W on a stage outside 0..num_stages-1, a bare KeyError in PyTorch, gets a message
/// of its own. The map is indexed by stage up to the highest stage any action mentions (other
/// kinds than F/B/I/W are mapped even beyond num_stages, as PyTorch does), kUnplaced where
/// no action is; PyTorch also maps a container's stage -1, which the vector cannot hold.
std::vector<std::uint32_t> pytorch_validate(const Schedule& s, std::uint32_t ranks, std::uint32_t num_stages,
                                            std::uint32_t num_microbatches);

/// The keywords of PyTorch's runtime schedules (LoopedBFS, Interleaved1F1B, InterleavedZeroBubble,
/// ZBVZeroBubble, DualPipeV; since about pytorch/pytorch cff2ecc8) that change the lowered order.
struct RuntimeLowering {
  std::optional<std::int64_t> max_active_stages = 3;  ///< add_unshard_reshard's; nullopt: None
  bool defer_pp_recv = false;                         ///< then defer_recv_ops
};

/// The runtime recipe of `_PipelineScheduleRuntime._prepare_schedule_with_comms` for a compute-only
/// schedule: validate -> add_unshard_reshard -> add_reduce_grad -> add_send_recv (with the
/// validated stage-to-rank map) -> defer_recv_ops when `options.defer_pp_recv`. Sizes come from the schedule
/// (num_stages, num_microbatches) or are inferred when it does not state them. Between validation and lowering,
/// PyTorch's compute-only check: any non-compute action is an error ("Expected compute-only schedule but found
/// communication action ..."). A stated placement is not used: PyTorch replaces the mapping with the validated one.
Schedule lower_runtime(const Schedule& s, const RuntimeLowering& options = {});

/// What `--lower runtime` and `--runtime pytorch` apply: lower_runtime on `s` without its
/// REDUCE_GRAD actions. PyTorch's single-stage orders (GPipe, 1F1B --pytorch-compat) already end
/// each rank with REDUCE_GRAD; the recipe places it again, at the same steps.
Schedule lower_runtime_recipe(const Schedule& s, const RuntimeLowering& options = {});

/// Every action of `kind` removed (containers are kept whole; idle steps stay).
Schedule strip_kind(const Schedule& s, ActionKind kind);

/// The test-style lowering of PyTorch's test_schedule.py: add_send_recv alone, with the
/// schedule's placement when it states one, else infer_placement (placement_of).
Schedule lower_send_recv(const Schedule& s);

}  // namespace ppsched
