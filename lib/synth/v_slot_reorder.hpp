// V-Half and V-Min reordered slot by slot, as the Zero Bubble authors' zbv_greedy.py does it
// (sail-sg/zero-bubble-pipeline-parallelism): ppsched's own code for their greedy pass, so that the
// automatic search has their schedule among its candidates. Everything is in unit slots, so the
// order it gives each rank does not depend on the costs; the costs only time it.
//
// The pass, twice: the pattern's actions are visited in slot order across all ranks; in the
// warm-up (until rank 0's first first-chunk input gradient) and in the cool-down (after the last
// first-chunk forward) each moves to the earliest free slot after its inputs where the rank's
// memory peak stays at most the pattern's; in between every action keeps its slot. The first pass
// places the weight gradients explicitly (each in the first free slot after an input gradient)
// and moves them too; the second drops them, counts each free slot as a deferred W, and moves
// the warm-up's actions only in the cool-down. Each pass ends by running its order eagerly in
// unit time, whose start times are the next pass's slots. Last, the W's go back into the free
// slots, the second chunk's first.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/action.hpp"

namespace ppsched::vslot {

/// Rank i's slots for its first microbatch of each of the pattern's four kinds (its first-chunk
/// forward, second-chunk forward, second-chunk input gradient, first-chunk input gradient); the
/// microbatches after repeat every six slots (v_patterns.cpp states the offsets).
std::array<std::int64_t, 4> pattern_offsets(std::uint32_t ranks, std::uint32_t rank, bool half);

/// Each rank's program, V placement (rank r holds stages r and 2p-1-r), or nullopt where the
/// authors' pass fails on this shape (p < 2, or a step whose inputs come after it).
std::optional<std::vector<std::vector<Action>>> slot_reordered(std::uint32_t ranks, std::uint32_t microbatches,
                                                               bool half);

}  // namespace ppsched::vslot
