// A V schedule built in rounds (internal to lib/auto): the order of the Zero Bubble authors'
// V search (zbv.py in sail-sg/zero-bubble-pipeline-parallelism), re-derived from how it works,
// as a guide for the greedy.
//
// After a warm-up of forwards, every round gives each rank one input gradient and then one
// forward, in a fixed order of ranks, each waiting for what it needs; a W runs before them only
// where it fits in the wait (or where the rank's idle time would otherwise pass the most any rank
// has idled). The two chunks' input gradients go in turn, the first chunk's as soon as its input
// is known. The greedy decides one action at a time from what is ready; near m = p this order
// keeps the input-gradient chain back to stage 0 moving where the greedy lets it lag.
#pragma once

#include <optional>
#include <vector>

#include "auto/shape.hpp"
#include "ir/action.hpp"

namespace ppsched::auto_detail {

/// Each rank's program, in the rounds' order, or nullopt when the rounds cannot be built under
/// `cap` (a forward with no W left to free memory for it). `fill_before_i` / `fill_before_f`: a W
/// may also run before an input gradient / a forward of the first chunk when the rank would idle
/// longer than its share (the authors' fill_b and fill_f).
std::optional<std::vector<std::vector<Action>>> v_rounds(const Shape& sh, double cap, bool fill_before_i,
                                                         bool fill_before_f);

}  // namespace ppsched::auto_detail
