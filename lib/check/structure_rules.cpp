// Rules about where actions are: rank count, stage and microbatch range, placement.
#include <fmt/format.h>

#include <map>
#include <optional>

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

namespace {

// "rank r holds stages r and 7-r": how a placement style lays `stages` stages on `ranks` ranks.
std::string style_words(PlacementStyle style, std::uint32_t ranks, std::uint32_t stages) {
  if (style == PlacementStyle::V) return fmt::format("as a V (rank r holds stages r and {}-r)", stages - 1);
  return stages > ranks ? fmt::format("in a loop (rank r holds stages r, r+{}, ...)", ranks)
                        : std::string("in a loop (rank r holds stage r)");
}

// The style whose placement is exactly `file` (every stage on one rank), if one is.
std::optional<PlacementStyle> style_of(const std::vector<std::uint32_t>& file, std::uint32_t ranks) {
  if (ranks == 0 || file.empty() || file.size() % ranks != 0) return std::nullopt;
  const auto per_rank = static_cast<std::uint32_t>(file.size() / ranks);
  for (PlacementStyle style : {PlacementStyle::Loop, PlacementStyle::V}) {
    if (style == PlacementStyle::V && per_rank != 2) continue;
    if (Placement::for_shape(style, ranks, per_rank).stage_to_rank == file) return style;
  }
  return std::nullopt;
}

}  // namespace

void stage_on_wrong_rank(const CheckContext& ctx, DiagnosticSink& sink) {
  if (ctx.placement_inferred) return;  // nothing independent to compare with
  // From the index: when every stage is on one rank, its first action's rank says it all.
  const ActionIndex& idx = index_of(ctx);
  std::vector<std::uint32_t> file;  // the file's own placement, when every stage is on one rank
  if (!idx.any_stage_on_two_ranks() && !idx.any_stage_beyond()) {
    bool fine = true, whole = true;
    for (std::uint32_t st = 0; st < idx.stages() && st < ctx.stage_to_rank.size(); ++st) {
      fine &= idx.stage_rank(st) == ActionIndex::kNone || idx.stage_rank(st) == ctx.stage_to_rank[st];
      whole &= idx.stage_rank(st) != ActionIndex::kNone;
      file.push_back(idx.stage_rank(st));
    }
    if (fine) return;
    if (!whole || file.size() != ctx.stage_to_rank.size()) file.clear();
  }
  // Each (stage, rank) once, at its first action, with how many more there are.
  struct Misplaced {
    std::size_t rank, step, count;
    std::uint32_t stage, want;
    std::string first;
  };
  std::vector<Misplaced> found;
  std::map<std::pair<std::uint32_t, std::size_t>, std::size_t> index;
  for_each_leaf(*ctx.schedule, [&](std::size_t r, std::size_t i, const Action& a) {
    if (!a.has_stage() || a.stage >= ctx.stage_to_rank.size()) return;
    const std::uint32_t want = ctx.stage_to_rank[a.stage];
    if (want == r) return;
    auto [it, added] = index.try_emplace({a.stage, r}, found.size());
    if (added) found.push_back({r, i, 0, a.stage, want, text(ctx, a)});
    ++found[it->second].count;
  });
  if (found.empty()) return;
  // A whole file laid out in another placement style than the one checked: one finding, with
  // the likely cause, instead of one per action.
  const auto ranks = static_cast<std::uint32_t>(ctx.ranks);
  const auto stages = static_cast<std::uint32_t>(ctx.stage_to_rank.size());
  const std::optional<PlacementStyle> theirs = style_of(file, ranks);
  const std::optional<PlacementStyle> ours = style_of(ctx.stage_to_rank, ranks);
  if (theirs && ours && theirs != ours) {
    std::size_t actions = 0;
    for (const Misplaced& m : found) actions += m.count;
    const Misplaced& m = found.front();
    report(ctx, sink, "stage-on-wrong-rank", m.rank, m.step,
           fmt::format("the file lays its stages out {}, but the placement checked lays them out {}: {} actions "
                       "on {} (stage, rank) pairs are on another rank than it says, the first here ({} on rank {}). "
                       "{}",
                       style_words(*theirs, ranks, stages), style_words(*ours, ranks, stages), actions, found.size(),
                       m.first, m.rank,
                       *theirs == PlacementStyle::V
                           ? "A V-shaped file needs a V schedule: --schedule ZBVZeroBubble or DualPipeV (torchtitan's "
                             "pipeline_parallel_schedule), or --placement v"
                           : "A looped file needs a looped schedule: --schedule Interleaved1F1B, "
                             "InterleavedZeroBubble or LoopedBFS (torchtitan's pipeline_parallel_schedule), or "
                             "--placement loop"));
    return;
  }
  for (const Misplaced& m : found)
    report(ctx, sink, "stage-on-wrong-rank", m.rank, m.step,
           fmt::format(
               "{} is on rank {}, but the placement puts stage {} on rank {}{}", m.first, m.rank, m.stage, m.want,
               m.count > 1
                   ? fmt::format(" ({} more action(s) of stage {} on rank {} after it)", m.count - 1, m.stage, m.rank)
                   : std::string()));
}

}  // namespace ppsched::check
