// What a profiled run did, per rank: the pipeline actions it executed, in order, with when each
// ran on the host and on the GPU, grouped into profiled steps. A profiler trace reader
// (parse/kineto_trace.hpp) produces it; lib/trace aligns the ranks' clocks, measures costs and
// compares the run with the simulator. Times are microseconds on the rank's own clock.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/action.hpp"
#include "ir/schedule.hpp"

namespace ppsched {

struct MeasuredAction {
  Action action;           ///< `PP:<action>`: a plain action, or a container whose parts are in the rank's sub_actions
  std::uint32_t step = 0;  ///< index into MeasuredRank::steps
  double cpu_start = 0, cpu_end = 0;  ///< its host range (record_function)
  /// Its GPU time: from its first kernel's start to its last kernel's end, and the kernels' busy
  /// time (their durations summed). has_gpu false: no kernel found (then the GPU fields are 0).
  double gpu_start = 0, gpu_end = 0, gpu_busy = 0;
  bool has_gpu = false;
  /// The CUDA stream its last kernel ran on (for a SEND or RECV, its NCCL stream); -1 when none.
  std::int64_t gpu_stream = -1;
};

struct MeasuredStep {
  std::uint64_t number = 0;  ///< N of ProfilerStep#N
  double cpu_start = 0, cpu_end = 0;
};

struct MeasuredRank {
  std::string file;  ///< where it was read from
  std::uint32_t rank = 0, world_size = 0;
  std::vector<MeasuredStep> steps;      ///< in time order
  std::vector<MeasuredAction> actions;  ///< in host order (cpu_start), every step's
  SubActionTable sub_actions;           ///< the parts of its containers (OVERLAP_F_B)
};

}  // namespace ppsched
