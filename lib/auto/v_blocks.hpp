// V orders from building blocks (internal to lib/auto): every distinct building block of
// "Pipeline Parallelism with Controllable Memory" (Qi et al., arXiv 2405.15362) that fits what a
// cap holds, each run through the paper's framework (synth/v_block.hpp: repeat, squeeze, reorder
// the warm-up and the cool-down, fill the holes, in unit slots). At a tight cap V-Min and V-Half
// are two such blocks; others of the same memory can pipeline better. The search replays each
// order under the real cap and costs (rounds.cpp, "building blocks").
#pragma once

#include <cstddef>
#include <vector>

#include "auto/shape.hpp"
#include "ir/action.hpp"

namespace ppsched::auto_detail {

/// Each rank's program for every distinct building block whose reordered schedule holds at most
/// `chunks` chunk activations per rank (at most 2p), the blocks enumerated in a fixed order, at
/// most `limit` of them. Stops early once the slots it has worked through (`work`, added to, each
/// cell of a grid pass counted once) pass `most_work`. Two stages per rank only (empty otherwise).
std::vector<std::vector<std::vector<Action>>> v_block_orders(const Shape& sh, std::uint32_t chunks, std::size_t limit,
                                                             double most_work, double& work);

}  // namespace ppsched::auto_detail
