// How big a synthesized schedule will be, estimated before it is built: what the size budget of
// compile, list and tune (--max-schedule-gib) and tune's work estimate count. Not an exact count:
// an upper bound good to a small factor, cheap enough to take for every trial.
#pragma once

#include <cstdint>

namespace ppsched {

/// The estimate for `ranks` x `stages_per_rank` stages and `microbatches` microbatches: three
/// compute actions per stage and microbatch (F, I, W), three times that when lowered with comms,
/// at 8 bytes each (sizeof(Action)).
struct ScheduleSizeEstimate {
  double actions = 0;
  double gib = 0;
};

ScheduleSizeEstimate estimate_schedule_size(std::uint64_t ranks, std::uint64_t stages_per_rank,
                                            std::uint64_t microbatches, bool lowered);

}  // namespace ppsched
