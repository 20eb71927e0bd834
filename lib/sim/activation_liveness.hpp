// Activation memory as PyTorch counts it: `analyze_pipeline_activation_liveness` (pytorch/pytorch
// cff2ecc8), which gives each activation a lifetime over a rank's finalized action order and
// colours the lifetimes with reusable slots.
//
//   - A lifetime starts at the forward of its (stage, microbatch) and ends at its full backward
//     (B) or, when the backward is split, at its weight backward (W): I does not end it, since W
//     still reads the activation. Both ends are inclusive, and the sub-actions of an
//     OVERLAP_F_B share its position.
//   - Positions are indices into the rank's order, idle steps included (PyTorch's None).
//   - Granularity stage_microbatch: a lifetime per (stage, microbatch) of the rank's stages;
//     microbatch: one per microbatch, from its earliest forward to its latest release on the
//     rank's stages.
//   - Slots are assigned greedily by (start, release, input order); a slot is reused only by a
//     lifetime that starts after the previous one ended. The slot count is the rank's peak.
//
// This counts activations, not bytes: ppsched's byte model (sim/memory.hpp) weighs each by its
// stage's size and frees at the same points, in time rather than in order positions.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "ir/schedule.hpp"

namespace ppsched {

enum class LivenessGranularity : std::uint8_t { StageMicrobatch, Microbatch };
/// "stage_microbatch" or "microbatch", PyTorch's names.
std::string_view liveness_granularity_name(LivenessGranularity g);

/// PyTorch's ValueError for an order it cannot analyse, word for word.
class LivenessError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct ActivationLiveness {
  LivenessGranularity granularity = LivenessGranularity::StageMicrobatch;
  std::vector<std::uint32_t> slots_per_rank;  ///< num_slots of each rank (0 for a rank without stages)
  std::uint32_t peak = 0;                     ///< the largest
};

/// Every rank of `s` (its finalized order: lowered, as PyTorch's runtime runs it), each analysed
/// for the stages `stage_to_rank` puts on it, with `microbatches` per iteration. Throws
/// LivenessError with PyTorch's message for the first rank whose order does not hold one
/// lifetime per (stage, microbatch).
ActivationLiveness activation_liveness(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                       std::uint32_t microbatches, LivenessGranularity granularity);

}  // namespace ppsched
