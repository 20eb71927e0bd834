// Rules about what a backward can compute, from the stage spec's declared inputs.
//
// The case behind them: torchtitan's CI lost its zero-bubble and CSV-loaded schedule tests when
// an I (stage_backward_input) ran on a stage where a keyword input did not require grad, and
// torch.autograd.grad failed with "One of the differentiated Tensors does not require grad".
#include <fmt/format.h>

#include "check/check_support.hpp"
#include "check/rules_impl.hpp"

namespace ppsched::check {

void input_grad_without_requires_grad(const CheckContext& ctx, DiagnosticSink& sink) {
  if (!ctx.stage_spec) return;
  std::vector<bool> reported(ctx.stages, false);
  for_each_leaf(*ctx.schedule, [&](std::size_t r, std::size_t i, const Action& a) {
    if (a.kind != ActionKind::I || !a.has_stage() || a.stage == 0 || a.stage >= ctx.stage_spec->size()) return;
    if (reported[a.stage]) return;  // once per stage: the fix is the same for all its microbatches
    for (const StageSpec::Input& in : (*ctx.stage_spec)[a.stage].inputs) {
      if (!in.tensor) continue;  // input-grad-with-non-tensor-input
      if (in.requires_grad) continue;
      reported[a.stage] = true;
      if (ctx.pytorch_filters_non_grad_inputs) {
        report(ctx, sink, "input-grad-without-requires-grad", r, i,
               fmt::format("{} computes input gradients of stage {}, whose {} input '{}' does not require grad: "
                           "PyTorch {}.{} and later skip that input, older releases fail",
                           text(ctx, a), a.stage, in.keyword ? "keyword" : "positional", in.name,
                           kPytorchFiltersNonGradInputs[0], kPytorchFiltersNonGradInputs[1]),
               {Note{{}, "to run on any release, use B on this stage or make the input non-differentiable", {}}});
        return;
      }
      report(ctx, sink, "input-grad-without-requires-grad", r, i,
             fmt::format("{} computes input gradients of stage {}, but its {} input '{}' does not require grad",
                         text(ctx, a), a.stage, in.keyword ? "keyword" : "positional", in.name),
             {Note{{},
                   "PyTorch's stage_backward_input fails here with \"One of the differentiated Tensors does "
                   "not require grad\"; use B on this stage, or make the input non-differentiable in the "
                   "model (detach it, or pass it as a buffer)",
                   {}}});
      return;
    }
  });
}

// Not a tensor: PyTorch's stage_backward_input reads requires_grad of every input, and this one has
// none (pytorch/torchtitan#3584, open against current PyTorch). No release is known to skip such
// inputs, so no --pytorch-version makes it safe.
void input_grad_with_non_tensor_input(const CheckContext& ctx, DiagnosticSink& sink) {
  if (!ctx.stage_spec) return;
  std::vector<bool> reported(ctx.stages, false);
  for_each_leaf(*ctx.schedule, [&](std::size_t r, std::size_t i, const Action& a) {
    if (a.kind != ActionKind::I || !a.has_stage() || a.stage == 0 || a.stage >= ctx.stage_spec->size()) return;
    if (reported[a.stage]) return;  // once per stage
    for (const StageSpec::Input& in : (*ctx.stage_spec)[a.stage].inputs) {
      if (in.tensor) continue;
      reported[a.stage] = true;
      report(ctx, sink, "input-grad-with-non-tensor-input", r, i,
             fmt::format("{} computes input gradients of stage {}, whose {} input '{}' is not a tensor: PyTorch's "
                         "stage_backward_input reads its requires_grad and fails with AttributeError (no release is "
                         "known to skip such inputs)",
                         text(ctx, a), a.stage, in.keyword ? "keyword" : "positional", in.name),
             {Note{{},
                   "use B on this stage (a full-backward schedule such as Interleaved1F1B), or build the "
                   "non-tensor inside the stage instead of passing it in",
                   {}}});
      return;
    }
  });
}

void first_stage_input_grad(const CheckContext& ctx, DiagnosticSink& sink) {
  if (index_of(ctx).kind_count(ActionKind::I) == 0) return;
  bool done = false;
  for_each_leaf(*ctx.schedule, [&](std::size_t r, std::size_t i, const Action& a) {
    if (done || a.kind != ActionKind::I || a.stage != 0) return;
    done = true;  // once: every I of stage 0 is the same story
    report(ctx, sink, "first-stage-input-grad", r, i,
           fmt::format("{} is on the first stage, where PyTorch's runtime skips an I and runs the whole backward "
                       "in the W: splitting I and W buys nothing there",
                       text(ctx, a)));
  });
}

}  // namespace ppsched::check
