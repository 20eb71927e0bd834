// Rules about which actions exist and in what order each rank runs them.
#include <fmt/format.h>

#include "check/check_support.hpp"
#include "check/rules_impl.hpp"

namespace ppsched::check {

void duplicate_action(const CheckContext& ctx, DiagnosticSink& sink) {
  const ActionIndex& idx = index_of(ctx);
  if (!idx.any_repeat()) return;
  for_each_leaf(*ctx.schedule, [&](std::size_t r, std::size_t i, const Action& a) {
    if (!a.has_stage() || !a.has_microbatch()) return;
    std::uint32_t first = idx.first(a.kind, a.stage, a.microbatch());
    if (first == ActionIndex::kNone || first == idx.ordinal(r, i)) return;
    auto [fr, fs] = idx.position(first);
    report(ctx, sink, "duplicate-action", r, i, fmt::format("{} appears a second time", text(ctx, a)),
           {note_at(ctx, fr, fs, "first here")});
  });
}

namespace {
// A diagnostic about a (stage, microbatch) that has no action: located at the rank of the stage.
void report_missing(const CheckContext& ctx, DiagnosticSink& sink, std::string_view rule, std::uint32_t stage,
                    std::string message) {
  std::size_t rank = stage < ctx.stage_to_rank.size() ? ctx.stage_to_rank[stage] : 0;
  Diagnostic d;
  d.rule = std::string(rule);
  d.loc = action_location(ctx, rank, 0);
  d.loc.column = d.loc.line ? 1 : 0;
  d.message = std::move(message);
  sink.report(std::move(d));
}
}  // namespace

void missing_forward(const CheckContext& ctx, DiagnosticSink& sink) {
  const ActionIndex& idx = index_of(ctx);
  for (std::uint32_t s = 0; s < ctx.stages && !sink.full(); ++s)
    for (std::uint32_t m = 0; m < ctx.microbatches && !sink.full(); ++m)
      if (idx.count(ActionKind::F, s, m) == 0)
        report_missing(ctx, sink, "missing-forward", s, fmt::format("stage {} never runs {}F{}", s, s, m));
}

void missing_backward(const CheckContext& ctx, DiagnosticSink& sink) {
  const ActionIndex& idx = index_of(ctx);
  for (std::uint32_t s = 0; s < ctx.stages && !sink.full(); ++s)
    for (std::uint32_t m = 0; m < ctx.microbatches && !sink.full(); ++m) {
      bool b = idx.count(ActionKind::B, s, m) > 0, i = idx.count(ActionKind::I, s, m) > 0,
           w = idx.count(ActionKind::W, s, m) > 0;
      if (!b && !i)
        report_missing(ctx, sink, "missing-backward", s,
                       fmt::format("stage {} never runs the backward of microbatch {} ({}B{}, or {}I{} and {}W{})", s,
                                   m, s, m, s, m, s, m));
      else if (!b && i && !w)
        report_missing(ctx, sink, "missing-backward", s,
                       fmt::format("stage {} runs {}I{} but never its weight gradient {}W{}", s, s, m, s, m));
    }
}

namespace {
// Whether the index alone shows that no B or I runs before its forward (as for SENDs in
// comm_rules.cpp: each action once and each stage on one rank make ordinals comparable).
bool all_backwards_after_forward(const ActionIndex& idx) {
  if (!idx.dense() || idx.any_repeat() || idx.any_stage_on_two_ranks() || idx.any_stage_beyond()) return false;
  constexpr std::uint32_t kBackward =
      (1u << static_cast<unsigned>(ActionKind::B)) | (1u << static_cast<unsigned>(ActionKind::I));
  for (std::uint32_t st = 0; st < idx.stages(); ++st) {
    if ((idx.stage_kinds(st) & kBackward) == 0) continue;
    for (std::uint32_t m = 0; m < idx.microbatches(); ++m) {
      const std::uint32_t f = idx.first(ActionKind::F, st, m);
      if (f == ActionIndex::kNone) continue;
      for (ActionKind k : {ActionKind::B, ActionKind::I}) {
        const std::uint32_t b = idx.first(k, st, m);
        if (b != ActionIndex::kNone && f > b) return false;
      }
    }
  }
  return true;
}
}  // namespace

void backward_before_forward(const CheckContext& ctx, DiagnosticSink& sink) {
  const ActionIndex& idx = index_of(ctx);
  if (idx.kind_count(ActionKind::B) + idx.kind_count(ActionKind::I) == 0 || all_backwards_after_forward(idx)) return;
  for_each_leaf(*ctx.schedule, [&](std::size_t r, std::size_t i, const Action& a) {
    if ((a.kind != ActionKind::B && a.kind != ActionKind::I) || !a.has_microbatch()) return;
    std::uint32_t f = idx.first(ActionKind::F, a.stage, a.microbatch());
    if (!idx.later_on_rank(f, r, i)) return;  // (no forward at all: missing-forward says it)
    auto [fr, fs] = idx.position(f);
    report(ctx, sink, "backward-before-forward", r, i,
           fmt::format("{} runs before its forward {}F{}", text(ctx, a), a.stage, a.microbatch()),
           {note_at(ctx, fr, fs, "the forward is here")});
  });
}

void weight_before_input_grad(const CheckContext& ctx, DiagnosticSink& sink) {
  const ActionIndex& idx = index_of(ctx);
  if (idx.kind_count(ActionKind::W) == 0) return;
  for_each_leaf(*ctx.schedule, [&](std::size_t r, std::size_t i, const Action& a) {
    if (a.kind != ActionKind::W || !a.has_microbatch()) return;
    std::uint32_t in = idx.first(ActionKind::I, a.stage, a.microbatch());
    if (in == ActionIndex::kNone) {
      if (idx.count(ActionKind::B, a.stage, a.microbatch()) == 0)
        report(ctx, sink, "weight-before-input-grad", r, i,
               fmt::format("{} has no input-gradient pass {}I{} before it", text(ctx, a), a.stage, a.microbatch()));
      return;
    }
    if (!idx.later_on_rank(in, r, i)) return;
    auto [ir, is] = idx.position(in);
    report(ctx, sink, "weight-before-input-grad", r, i,
           fmt::format("{} runs before {}I{}", text(ctx, a), a.stage, a.microbatch()),
           {note_at(ctx, ir, is, "the input-gradient pass is here")});
  });
}

void full_and_split_backward(const CheckContext& ctx, DiagnosticSink& sink) {
  const ActionIndex& idx = index_of(ctx);
  if (idx.kind_count(ActionKind::B) == 0 || idx.kind_count(ActionKind::I) + idx.kind_count(ActionKind::W) == 0) return;
  for_each_leaf(*ctx.schedule, [&](std::size_t r, std::size_t i, const Action& a) {
    if (a.kind != ActionKind::B || !a.has_microbatch()) return;
    std::uint32_t split = idx.first(ActionKind::I, a.stage, a.microbatch());
    if (split == ActionIndex::kNone) split = idx.first(ActionKind::W, a.stage, a.microbatch());
    if (split == ActionIndex::kNone) return;
    auto [sr, ss] = idx.position(split);
    report(ctx, sink, "full-and-split-backward", r, i,
           fmt::format("{} is a full backward, but microbatch {} of stage {} also has I or W", text(ctx, a),
                       a.microbatch(), a.stage),
           {note_at(ctx, sr, ss, "the split backward is here")});
  });
}

}  // namespace ppsched::check
