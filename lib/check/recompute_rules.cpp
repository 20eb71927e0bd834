// A split backward on a checkpointed stage: PyTorch re-runs the stage's forward once in I and once
// per parameter group in W, where a full backward re-runs it once (model/recompute.hpp). That is
// what turned Interleaved Zero Bubble from the fastest schedule into the slowest once torchtitan
// enabled activation checkpointing (pytorch/torchtitan#773).
#include <fmt/format.h>

#include "check/check_support.hpp"
#include "check/rules_impl.hpp"
#include "model/recompute.hpp"

namespace ppsched::check {

void split_backward_recompute(const CheckContext& ctx, DiagnosticSink& sink) {
  if (!ctx.stage_spec) return;
  const std::vector<StageSpec>& spec = *ctx.stage_spec;
  const CostModel costs = cost_model(ctx);  // recompute charged, as the simulation charges it
  std::vector<bool> reported(ctx.stages, false);
  for_each_leaf(*ctx.schedule, [&](std::size_t r, std::size_t i, const Action& a) {
    if ((a.kind != ActionKind::I && a.kind != ActionKind::W) || !a.has_stage() || a.stage >= spec.size()) return;
    if (a.stage >= reported.size() || reported[a.stage]) return;  // once per stage
    const Recompute& rc = spec[a.stage].recompute;
    const bool first = a.stage == 0;
    const std::uint32_t split = recomputes_of(rc, first, ActionKind::I) + recomputes_of(rc, first, ActionKind::W);
    const std::uint32_t full = recomputes_of(rc, first, ActionKind::B);
    if (split <= full) return;  // not checkpointed, or stage 0 (W runs the whole backward there)
    reported[a.stage] = true;
    report(ctx, sink, "split-backward-recompute", r, i,
           fmt::format("{} splits the backward of stage {}, which is checkpointed ({}): PyTorch re-runs its forward "
                       "{} times per microbatch (once in I, {} in W, one per parameter group) where a full backward "
                       "re-runs it once: I and W take {:g} per microbatch against {:g} for B, in {} costs",
                       text(ctx, a), a.stage, recompute_mode_name(rc.mode), split, rc.weight_groups,
                       costs.cost(a.stage, ActionKind::I) + costs.cost(a.stage, ActionKind::W),
                       costs.cost(a.stage, ActionKind::B), ctx.costs ? "the given" : "unit"),
           {Note{{},
                 "use a full-backward schedule (Interleaved1F1B, 1F1B) while this stage is checkpointed, or "
                 "checkpoint less: `ppsched simulate --stage-spec` times both",
                 {}}});
  });
}

}  // namespace ppsched::check
