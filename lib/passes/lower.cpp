// PyTorch's two lowering recipes: what its runtime does to a compute-only schedule, and what
// its tests do (`_add_send_recv` alone).
#include <string>

#include "ir/action_text.hpp"
#include "passes/passes.hpp"

namespace ppsched {

namespace {

// add_send_recv names each stuck rank by the index of its head in the schedule it was given. The
// passes before it only drop idle steps and remove or add actions that are not compute
// (REDUCE_GRAD, UNSHARD, RESHARD), and a head that waits is a compute action (every other kind is
// always ready), so the head is the same n-th compute action of its rank in `passed` and in
// `input`: the error is restated with the index in `input`, the schedule the caller gave and the
// one every message names its actions from.
PassError in_terms_of(const PassError& e, const Schedule& passed, const Schedule& input) {
  std::vector<PassError::Stuck> stuck = e.stuck();
  for (PassError::Stuck& st : stuck) {
    if (st.rank >= passed.ranks.size() || st.rank >= input.ranks.size()) continue;
    const auto& from = passed.ranks[st.rank].actions;
    std::size_t nth = 0;
    for (std::size_t i = 0; i < st.step && i < from.size(); ++i) nth += is_compute(from[i].kind);
    const auto& to = input.ranks[st.rank].actions;
    for (std::size_t i = 0; i < to.size(); ++i) {
      if (!is_compute(to[i].kind)) continue;
      if (nth-- == 0) {
        st.step = i;
        break;
      }
    }
  }
  PassError out(e.what(), std::move(stuck));
  if (e.grid_step()) out.with_grid_step(*e.grid_step());
  return out;
}

}  // namespace

// `_PipelineScheduleRuntime._prepare_schedule_with_comms(format="compute_only")`: validation
// (which also yields the stage-to-rank map), then the compute-only check, then per rank
// `_add_unshard_reshard` and `_add_reduce_grad`, then `_add_send_recv` over all ranks.
Schedule lower_runtime(const Schedule& s, const RuntimeLowering& options) {
  const std::uint32_t num_stages = stated_stages(s);
  const std::uint32_t num_microbatches = stated_microbatches(s);
  const auto ranks = static_cast<std::uint32_t>(s.rank_count());
  std::vector<std::uint32_t> stage_to_rank = pytorch_validate(s, ranks, num_stages, num_microbatches);

  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    const auto& program = s.ranks[r].actions;
    for (std::size_t i = 0; i < program.size(); ++i) {
      const Action& a = program[i];
      if (a.is_idle() || is_compute(a.kind)) continue;
      throw PassError("Expected compute-only schedule but found communication action '" +
                      action_text(a, s.sub_actions) + "' at rank " + std::to_string(r) + ", position " +
                      std::to_string(i) +
                      ". Communication actions (e.g. SEND_F, RECV_F, etc.) should not be present when "
                      "format='compute_only'.");
    }
  }

  Schedule fsdp = add_unshard_reshard(s, options.max_active_stages);
  Schedule reduced = add_reduce_grad(fsdp, num_microbatches);
  Schedule comms;
  try {
    comms = add_send_recv(reduced, stage_to_rank, num_stages);
  } catch (const PassError& e) {
    if (e.stuck().empty()) throw;
    throw in_terms_of(e, reduced, s);
  }
  return options.defer_pp_recv ? defer_recv_ops(comms, stage_to_rank) : comms;
}

Schedule lower_runtime_recipe(const Schedule& s, const RuntimeLowering& options) {
  const Schedule stripped = strip_kind(s, ActionKind::ReduceGrad);
  try {
    return lower_runtime(stripped, options);
  } catch (const PassError& e) {
    if (e.stuck().empty()) throw;
    throw in_terms_of(e, stripped, s);
  }
}

// PyTorch's tests pass the mapping they built the schedule with; a CSV does not state one, so
// it is inferred the way PyTorch's loader would (first rank that mentions each stage).
Schedule lower_send_recv(const Schedule& s) {
  return add_send_recv(s, placement_of(s).stage_to_rank, stated_stages(s));
}

}  // namespace ppsched
