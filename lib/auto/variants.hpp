// The greedy variants the automatic search tries, in order (internal to lib/auto; what a
// variant changes is documented on GreedyPolicy in greedy.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "auto/greedy.hpp"
#include "auto/shape.hpp"

namespace ppsched::auto_detail {

/// The caps the greedy aims for, the real one first.
std::vector<double> target_caps(const AutoParams& p, const Shape& sh);

/// Every unguided greedy variant, most promising first.
std::vector<GreedyPolicy> greedy_variants(const AutoParams& p, const Shape& sh);

/// The exploration round (rounds.cpp runs it only when it is cheap against the budget):
/// for V, every other combination of the greedy's switches, at the real cap, that `tried` does
/// not hold; none for one chunk.
std::vector<GreedyPolicy> exploration_variants(const AutoParams& p, const Shape& sh,
                                               const std::vector<GreedyPolicy>& tried);

/// How a variant is named in AutoCandidate::origin, e.g. "greedy (aim 8, F before W)".
std::string describe(const GreedyPolicy& pol, std::uint32_t stages_per_rank);

}  // namespace ppsched::auto_detail
