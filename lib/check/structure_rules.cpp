// Rules about where actions are: rank count, stage and microbatch range, placement.
#include <fmt/format.h>

#include "check/check_support.hpp"
#include "check/rules_impl.hpp"

namespace ppsched::check {

void rank_count(const CheckContext& ctx, DiagnosticSink& sink) {
  std::size_t rows = ctx.schedule->rank_count();
  if (rows == ctx.ranks) return;
  Diagnostic d;
  d.rule = "rank-count";
  d.loc.file = ctx.file;
  d.message = fmt::format("the schedule has {} rank(s), {} expected", rows, ctx.ranks);
  sink.report(std::move(d));
}

void stage_out_of_range(const CheckContext& ctx, DiagnosticSink& sink) {
  if (!index_of(ctx).any_stage_beyond()) return;
  for_each_leaf(*ctx.schedule, [&](std::size_t r, std::size_t i, const Action& a) {
    if (a.has_stage() && a.stage >= ctx.stages)
      report(ctx, sink, "stage-out-of-range", r, i,
             fmt::format("{} names stage {}; the pipeline has stages 0 to {}", text(ctx, a), a.stage,
                         ctx.stages ? ctx.stages - 1 : 0));
  });
}

void microbatch_out_of_range(const CheckContext& ctx, DiagnosticSink& sink) {
  if (!index_of(ctx).any_microbatch_beyond()) return;
  for_each_leaf(*ctx.schedule, [&](std::size_t r, std::size_t i, const Action& a) {
    if (a.has_microbatch() && a.microbatch() >= ctx.microbatches)
      report(ctx, sink, "microbatch-out-of-range", r, i,
             fmt::format("{} names microbatch {}; there are {} (0 to {})", text(ctx, a), a.microbatch(),
                         ctx.microbatches, ctx.microbatches ? ctx.microbatches - 1 : 0));
  });
}

void stage_on_two_ranks(const CheckContext& ctx, DiagnosticSink& sink) {
  if (!index_of(ctx).any_stage_on_two_ranks()) return;
  struct Seen {
    std::size_t rank = SIZE_MAX, step = 0;
  };
  std::vector<Seen> seen(ctx.stages);
  for_each_leaf(*ctx.schedule, [&](std::size_t r, std::size_t i, const Action& a) {
    if (!a.has_stage() || a.stage >= ctx.stages) return;
    Seen& s = seen[a.stage];
    if (s.rank == SIZE_MAX) {
      s = {r, i};
    } else if (s.rank != r) {
      report(ctx, sink, "stage-on-two-ranks", r, i,
             fmt::format("{} runs stage {} on rank {}, but rank {} runs it too", text(ctx, a), a.stage, r, s.rank),
             {note_at(ctx, s.rank, s.step, fmt::format("stage {} first appears on rank {} here", a.stage, s.rank))});
    }
  });
}

void stage_on_wrong_rank(const CheckContext& ctx, DiagnosticSink& sink) {
  if (ctx.placement_inferred) return;  // nothing independent to compare with
  // From the index: when every stage is on one rank, its first action's rank says it all.
  const ActionIndex& idx = index_of(ctx);
  if (!idx.any_stage_on_two_ranks() && !idx.any_stage_beyond()) {
    bool fine = true;
    for (std::uint32_t st = 0; st < idx.stages() && st < ctx.stage_to_rank.size(); ++st)
      fine &= idx.stage_rank(st) == ActionIndex::kNone || idx.stage_rank(st) == ctx.stage_to_rank[st];
    if (fine) return;
  }
  for_each_leaf(*ctx.schedule, [&](std::size_t r, std::size_t i, const Action& a) {
    if (!a.has_stage() || a.stage >= ctx.stage_to_rank.size()) return;
    std::uint32_t want = ctx.stage_to_rank[a.stage];
    if (want != r)
      report(ctx, sink, "stage-on-wrong-rank", r, i,
             fmt::format("{} is on rank {}, but the placement puts stage {} on rank {}", text(ctx, a), r, a.stage, want));
  });
}

}  // namespace ppsched::check
