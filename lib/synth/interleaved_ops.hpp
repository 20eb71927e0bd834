// The per-rank operation list shared by Interleaved1F1B and InterleavedZeroBubble
// (PyTorch's _get_warmup_ops and _get_1f1b_rank_ops): warm-up forwards, then forward+backward
// pairs, then backwards, each op on the local stage its round points to.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/action.hpp"

namespace ppsched::synth {

struct InterleavedShape {
  std::uint32_t ranks, microbatches, local_stages;
  std::uint32_t rounds, per_round;  ///< rounds = max(1, m / p); per_round = m / rounds
};

/// Rounds and microbatches per round; throws SynthError when m is not a multiple of the rounds
/// (`what` starts PyTorch's message: "Interleaved 1F1B" or "Zero bubble").
InterleavedShape interleaved_shape(std::uint32_t ranks, std::uint32_t microbatches, std::uint32_t local_stages,
                                   const char* what);

/// Rank r's ops. zero_bubble: I instead of B, W after the first r steady ops, no cool-down idles.
std::vector<Action> interleaved_rank_ops(const InterleavedShape& shape, std::uint32_t rank, bool zero_bubble);

}  // namespace ppsched::synth
