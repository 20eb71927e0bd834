// V orders from building blocks (internal to lib/synth/auto), after "Pipeline Parallelism with
// Controllable Memory" (Qi et al., arXiv 2405.15362): ppsched's own code for the framework the
// paper describes (repeat a building block, squeeze it, reorder its warm-up and cool-down, fill
// its holes), all in unit slots.
//
// A building block gives every rank one slot in a period of six for each of its six actions of a
// microbatch: the forward, input gradient and weight gradient of each of its two chunks. Rank 0's
// slots are a first-row pattern; each next rank's come from the rank before by fixed offsets (its
// first-chunk forward and second-chunk input gradient some slots later, the other two one slot
// earlier), one offset for the first ranks and another for the rest. Repeating the block every
// six slots gives each rank an order; the offsets set how many microbatches are in flight, so the
// memory. At a tight cap V-Min and V-Half are two such blocks; others of the same memory can
// pipeline better, and the reordering of the warm-up and the cool-down is what makes a block's
// order competitive at small microbatch counts. Memory here is counted as the framework counts
// it, in chunk activations (a forward holds one until its W); the search replays each order
// under the real cap and costs (auto_schedule.cpp).
#pragma once

#include <cstddef>
#include <vector>

#include "ir/action.hpp"
#include "synth/auto/shape.hpp"

namespace ppsched::auto_detail {

/// Each rank's program for every distinct building block whose reordered schedule holds at most
/// `chunks` chunk activations per rank (at most 2p), the blocks enumerated in a fixed order, at
/// most `limit` of them. Stops early once the slots it has worked through (`work`, added to, each
/// cell of a grid pass counted once) pass `most_work`. Two stages per rank only (empty otherwise).
std::vector<std::vector<std::vector<Action>>> v_block_orders(const Shape& sh, std::uint32_t chunks, std::size_t limit,
                                                             double most_work, double& work);

}  // namespace ppsched::auto_detail
