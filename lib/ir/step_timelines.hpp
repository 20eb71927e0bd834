// A lock-step run's timelines (PyTorch's dry run, sim/pytorch_steps.hpp), kept small: each rank's
// timeline is its program, idle steps of the input dropped, with runs of idle steps put back where
// the rank waited. A writer reads them off the program and the waits as it writes (the CSV of the
// 6.2M-action 1F1B file has 7.4M cells): the timelines themselves would be a second copy of the
// schedule, larger than the first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ppsched {

/// `count` idle steps before the action at input index `before` (idle steps of the input counted).
struct StepWait {
  std::uint32_t before;
  std::uint32_t count;
};

/// Where each rank waited, and its timeline's length.
struct StepWaits {
  std::vector<std::vector<StepWait>> waits;  ///< per rank, in order
  std::vector<std::size_t> cells;            ///< per rank
};

}  // namespace ppsched
