#include "synth/size_estimate.hpp"

#include "ir/action.hpp"

namespace ppsched {

ScheduleSizeEstimate estimate_schedule_size(std::uint64_t ranks, std::uint64_t stages_per_rank,
                                            std::uint64_t microbatches, bool lowered) {
  // Doubles: the product of the flags' maxima overflows 64 bits.
  const double actions = double(ranks) * double(stages_per_rank) * double(microbatches) * 3.0 * (lowered ? 3.0 : 1.0);
  return {actions, actions * double(sizeof(Action)) / double(1ull << 30)};
}

}  // namespace ppsched
