// The activation-liveness face of `simulate --memory-model pytorch-liveness`: PyTorch's slot
// counts per rank at both granularities (sim/activation_liveness.hpp), and the cap when given.
//
//   activation liveness (PyTorch's analyze_pipeline_activation_liveness), slots per rank
//   granularity       peak  rank 0 rank 1 ...
//   stage_microbatch     5       5      4
//   microbatch           4       4      4
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/schedule.hpp"
#include "sim/activation_liveness.hpp"

namespace ppsched {

struct LivenessReport {
  ActivationLiveness stage_microbatch, microbatch;
  LivenessGranularity capped = LivenessGranularity::StageMicrobatch;  ///< which one --memory-cap limits
  double cap = 0;                                                     ///< slots; <= 0: none
  /// The peak the cap applies to.
  std::uint32_t capped_peak() const {
    return capped == LivenessGranularity::StageMicrobatch ? stage_microbatch.peak : microbatch.peak;
  }
};

/// The report of `s` (placed by `stage_to_rank`) at both granularities, over its stated
/// microbatches, with the cap `cap` on the `capped` one. Throws LivenessError for an order
/// PyTorch cannot analyse.
LivenessReport liveness_report(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                               LivenessGranularity capped, double cap);
/// "PyTorch's activation liveness cannot analyse rank 1's order: <PyTorch's message>".
std::string liveness_error_text(const LivenessError& e);

std::string liveness_text(const LivenessReport& r);
nlohmann::ordered_json liveness_json(const LivenessReport& r);

}  // namespace ppsched
