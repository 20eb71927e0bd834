#include "ir/placement.hpp"

namespace ppsched {

std::string_view placement_style_name(PlacementStyle style) {
  switch (style) {
    case PlacementStyle::Unspecified:
      return "unspecified";
    case PlacementStyle::Loop:
      return "loop";
    case PlacementStyle::V:
      return "v";
    case PlacementStyle::Explicit:
      return "explicit";
  }
  return "unspecified";
}

std::optional<PlacementStyle> placement_style_from_name(std::string_view name) {
  for (auto s : {PlacementStyle::Unspecified, PlacementStyle::Loop, PlacementStyle::V, PlacementStyle::Explicit})
    if (placement_style_name(s) == name) return s;
  return std::nullopt;
}

Placement Placement::loop(std::uint32_t ranks, std::uint32_t stages) {
  Placement p;
  p.style = PlacementStyle::Loop;
  p.stage_to_rank.resize(stages);
  for (std::uint32_t s = 0; s < stages; ++s) p.stage_to_rank[s] = s % ranks;
  return p;
}

std::optional<Placement> Placement::v(std::uint32_t ranks, std::uint32_t stages) {
  if (ranks == 0 || stages == 0 || stages % ranks != 0) return std::nullopt;
  Placement p;
  p.style = PlacementStyle::V;
  p.stage_to_rank.resize(stages);
  for (std::uint32_t s = 0; s < stages; ++s) {
    std::uint32_t lap = s / ranks, pos = s % ranks;
    // Even laps go down the ranks, odd laps come back up.
    p.stage_to_rank[s] = (lap % 2 == 0) ? pos : ranks - 1 - pos;
  }
  return p;
}

Placement Placement::for_shape(PlacementStyle style, std::uint32_t ranks, std::uint32_t stages_per_rank) {
  return style == PlacementStyle::V ? *v(ranks, ranks * stages_per_rank) : loop(ranks, ranks * stages_per_rank);
}

Placement Placement::explicit_map(std::vector<std::uint32_t> stage_to_rank) {
  Placement p;
  p.style = PlacementStyle::Explicit;
  p.stage_to_rank = std::move(stage_to_rank);
  return p;
}

std::vector<std::vector<std::uint32_t>> Placement::rank_to_stages(std::uint32_t ranks) const {
  std::vector<std::vector<std::uint32_t>> out(ranks);
  for (std::uint32_t s = 0; s < stage_to_rank.size(); ++s)
    if (stage_to_rank[s] < ranks) out[stage_to_rank[s]].push_back(s);
  return out;
}

}  // namespace ppsched
