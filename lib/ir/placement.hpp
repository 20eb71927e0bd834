// Placement: which rank runs each stage.
//
// PyTorch knows two styles. `loop` puts stage s on rank s mod R. `v` walks the ranks in a
// zig-zag (0..R-1, then R-1..0, then up again), so with two stages per rank, rank r holds
// stages r and 2R-1-r and the middle two stages share a rank. Anything else is `explicit`.
// A schedule read from a CSV file has no stated placement (`unspecified`): PyTorch infers it
// from the first rank that mentions each stage (infer_placement in schedule.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ppsched {

enum class PlacementStyle : std::uint8_t { Unspecified, Loop, V, Explicit };

std::string_view placement_style_name(PlacementStyle style);  // "unspecified", "loop", "v", "explicit"
std::optional<PlacementStyle> placement_style_from_name(std::string_view name);

/// Stage -> rank map plus the style it came from.
struct Placement {
  PlacementStyle style = PlacementStyle::Unspecified;
  std::vector<std::uint32_t> stage_to_rank;  ///< indexed by stage; empty when unspecified

  /// Stage s on rank s mod ranks. Requires ranks > 0.
  static Placement loop(std::uint32_t ranks, std::uint32_t stages);
  /// PyTorch's V zig-zag. Returns nullopt unless stages is a positive multiple of ranks.
  static std::optional<Placement> v(std::uint32_t ranks, std::uint32_t stages);
  static Placement explicit_map(std::vector<std::uint32_t> stage_to_rank);
  /// The placement of a pipeline of `ranks` ranks with `stages_per_rank` stages each, in `style`:
  /// V's zig-zag for V, loop for anything else. Requires ranks > 0.
  static Placement for_shape(PlacementStyle style, std::uint32_t ranks, std::uint32_t stages_per_rank);

  std::uint32_t num_stages() const { return static_cast<std::uint32_t>(stage_to_rank.size()); }
  /// Stages of each rank in ascending order (PyTorch's rank_to_stage); `ranks` rows.
  std::vector<std::vector<std::uint32_t>> rank_to_stages(std::uint32_t ranks) const;

  friend bool operator==(const Placement&, const Placement&) = default;
};

}  // namespace ppsched
