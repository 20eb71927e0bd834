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
// slot_memory_model is the byte model that counts slots instead, for a search that must stay
// under a slot cap.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ir/schedule.hpp"
#include "ir/user_error.hpp"
#include "sim/memory.hpp"

namespace ppsched {

enum class LivenessGranularity : std::uint8_t { StageMicrobatch, Microbatch };
/// "stage_microbatch" or "microbatch", PyTorch's names.
std::string_view liveness_granularity_name(LivenessGranularity g);
/// Both granularities, PyTorch's default (stage_microbatch) first.
inline constexpr std::array<LivenessGranularity, 2> kLivenessGranularities = {LivenessGranularity::StageMicrobatch,
                                                                              LivenessGranularity::Microbatch};
/// The granularity PyTorch calls `name`; nullopt for another name.
std::optional<LivenessGranularity> liveness_granularity_from_name(std::string_view name);

/// PyTorch's ValueError for an order it cannot analyse, word for word (what()), and the rank
/// whose order it is (PyTorch analyses one rank at a time, so its message does not say). A
/// user's error: the order is the schedule's.
class LivenessError : public UserError {
 public:
  explicit LivenessError(const std::string& message, std::uint32_t rank = 0) : UserError(message), rank_(rank) {}
  std::uint32_t rank() const { return rank_; }

 private:
  std::uint32_t rank_;
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

/// The byte model that counts what stage_microbatch liveness counts, for `stages` stages: every
/// activation weighs 1 and is held whole until its B or W (M_W = M_B: I frees nothing), with no
/// fixed term. A rank's F adds one at its position and its release frees one after it, so on a
/// valid order sequential_peak is the stage_microbatch slot count (a test checks every family),
/// and so is the simulated peak when every action takes time. The microbatch granularity counts
/// at most as many: where an order respects the data dependencies, a microbatch's lifetimes on
/// a rank overlap (its later stage's forward comes before its earlier stage's release), so its
/// merged lifetime is live only where one of them is.
/// The automatic search runs under it to stay under a slot cap; the slots themselves are still
/// counted by activation_liveness.
MemoryModel slot_memory_model(std::uint32_t stages);

}  // namespace ppsched
