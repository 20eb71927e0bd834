#include "check/expectations.hpp"

#include <fmt/format.h>

#include <optional>
#include <sstream>
#include <stdexcept>

#include "ir/user_error.hpp"

namespace ppsched {

void parse_placement(const std::string& text, Expectations& want) {
  if (text == "loop") {
    want.style = PlacementStyle::Loop;
  } else if (text == "v") {
    want.style = PlacementStyle::V;
  } else if (!text.empty()) {
    std::stringstream list(text);
    for (std::string item; std::getline(list, item, ',');) {
      try {
        want.stage_to_rank.push_back(static_cast<std::uint32_t>(std::stoul(item)));
      } catch (const std::exception&) {
        throw UserError("--placement: '" + item + "' is not a rank (give loop, v, or a list like 0,1,1,0)");
      }
    }
  }
}

ResolvedContext resolve_context(const Schedule& s, const SourceMap* source, std::string file, const Expectations& want,
                                const std::optional<InferredShape>& known) {
  ResolvedContext out;
  CheckContext& ctx = out.context;
  ctx.schedule = &s;
  ctx.source = source && !source->rank_line.empty() ? source : nullptr;
  ctx.file = std::move(file);
  ctx.ranks = want.ranks ? want.ranks : static_cast<std::uint32_t>(s.rank_count());
  if (!want.ranks) out.inferred.push_back({fmt::format("{} ranks (the row count)", ctx.ranks), {"--ranks"}});
  // PyTorch's placement inference and the microbatch count, in one pass run at most once (none
  // when the reader gathered them): the map ends at the highest stage used, so it also gives the
  // inferred stage count.
  std::optional<InferredShape> inferred = known;
  auto inferred_shape = [&]() -> const InferredShape& {
    if (!inferred) inferred = infer_shape(s);
    return *inferred;
  };
  auto inferred_placement = [&]() -> const Placement& { return inferred_shape().placement; };
  if (want.stages_per_rank) {
    ctx.stages = want.stages_per_rank * ctx.ranks;
  } else if (s.num_stages) {
    ctx.stages = s.num_stages;
  } else {
    ctx.stages = static_cast<std::uint32_t>(inferred_placement().stage_to_rank.size());  // infer_stage_count
    out.inferred.push_back({fmt::format("{} stages (the highest stage used)", ctx.stages), {"--stages-per-rank"}});
  }
  if (want.microbatches) {
    ctx.microbatches = want.microbatches;
  } else if (s.num_microbatches) {
    ctx.microbatches = s.num_microbatches;
  } else {
    ctx.microbatches = inferred_shape().microbatches;
    out.inferred.push_back({fmt::format("{} microbatches (the highest used)", ctx.microbatches), {"--microbatches"}});
  }
  // The first of: the caller's list, the caller's style, the schedule's own placement; else
  // PyTorch's inference, which a note names.
  ctx.placement_inferred = false;
  if (!want.stage_to_rank.empty()) {
    ctx.stage_to_rank = want.stage_to_rank;
  } else if (want.style == PlacementStyle::Loop) {
    ctx.stage_to_rank = Placement::loop(ctx.ranks, ctx.stages).stage_to_rank;
  } else if (want.style == PlacementStyle::V) {
    auto v = Placement::v(ctx.ranks, ctx.stages);
    if (!v)
      throw UserError(
          fmt::format("a v placement needs stages ({}) to be a multiple of ranks ({})", ctx.stages, ctx.ranks));
    ctx.stage_to_rank = v->stage_to_rank;
  } else if (s.placement.style != PlacementStyle::Unspecified) {
    ctx.stage_to_rank = s.placement.stage_to_rank;
  } else {
    ctx.stage_to_rank = inferred_placement().stage_to_rank;
    ctx.placement_inferred = true;
    out.inferred.push_back(
        {"each stage on the first rank that runs it (PyTorch's inference)", {"--placement", "--schedule"}});
  }
  if (ctx.stage_to_rank.size() < ctx.stages) ctx.stage_to_rank.resize(ctx.stages, 0);
  ctx.has_comms = has_comms(s);
  ctx.expect_compute_only = want.expect_compute_only;
  return out;
}

}  // namespace ppsched
