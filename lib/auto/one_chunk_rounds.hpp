// A one-chunk schedule built in rounds (internal to lib/auto): the order of the Zero Bubble
// authors' one-chunk search (Graph.manual_order in zb.py, sail-sg/zero-bubble-pipeline-
// parallelism), re-derived from how it works, as an order for the greedy to replay.
//
// Microbatch 0's forward runs on every stage; then each stage takes as many more forwards as end
// before its first input gradient's input can arrive (or, by one rule, as start before it), each
// stage fewer than the one before, and microbatch 0's input gradients run back from the last
// stage. Every later round gives each stage one forward (in stage order) and then one input
// gradient (from the last stage back); a stage runs deferred W's in the wait before either while
// one ends in it, and one more where the wait would take its idle time past the most any stage
// has idled. The rules below are the three switches the authors try all eight combinations of.
#pragma once

#include <optional>
#include <vector>

#include "auto/shape.hpp"
#include "ir/action.hpp"

namespace ppsched::auto_detail {

struct OneChunkRules {
  /// The warm-up takes a forward only when it ends before the first input gradient's input can
  /// arrive (the stage may idle before it); else while the stage is not yet past that time.
  bool idle_before_first_input_grad = false;
  /// A stage two forwards or more ahead of the next skips its forward of the round when the next
  /// stage's forward and input gradient would come back before it could end (their prioritize_b).
  bool hold_forwards_for_input_grads = false;
  /// A wait shorter than the stage's share of idle time (the most any stage has idled, less its
  /// own) still gets a W; else it is left idle.
  bool fill_short_waits = false;
};

/// Each rank's program for one chunk per rank, or nullopt where the rounds cannot be built under
/// `cap` (no W left to free memory for a forward) or would run an action before its input.
std::optional<std::vector<std::vector<Action>>> one_chunk_rounds(const Shape& sh, double cap, OneChunkRules rules);

}  // namespace ppsched::auto_detail
