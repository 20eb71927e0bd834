// The timed model's aggregate answers without a Timeline: makespan, per-rank busy and idle time,
// both bubble ratios, the bubble decomposition and each rank's peak memory, in one run whose
// memory is bounded by the pipeline's live window, not by the schedule's length.
//
// Why a second run of the same model: a Timeline costs 29 bytes per action, and on a
// hypervisor every fresh megabyte costs about 0.6-0.8 ms in page faults, so for 6.2M actions the
// Timeline alone is ~150 ms before a dependency is checked (docs/bench.md). Most questions
// (`simulate --views summary`, tune's and auto's candidate ranking, validate's thresholds) need
// only aggregates. This run keeps per event only what a consumer still needs, in a ring indexed
// by microbatch that covers the microbatches some unfinished action still names (every
// dependency in the model is between actions of the same microbatch), and folds each finished
// action into the aggregates at once.
//
// Contract: the result equals analyze(s, simulate_timed(s, ...), memory, cap) field for field,
// bit for bit, except that memory.per_rank (the step function) is left empty. The same event
// order as simulate_timed is used, so even malformed schedules (a duplicated action) agree. A
// schedule that cannot finish throws TimedDeadlock, exactly as simulate_timed does (it is run
// again, with a Timeline, to name the stuck actions).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/schedule.hpp"
#include "sim/analysis.hpp"
#include "sim/memory.hpp"
#include "sim/timed.hpp"

namespace ppsched {

/// How a run went, for tests and benchmarks: whether it fell back to the Timeline path, and the
/// largest ring of event slots it used, in microbatches (a power of two).
struct AggregateStats {
  bool fell_back = false;
  std::uint32_t window = 0;
};

SimAnalysis simulate_aggregates(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                const TimedOptions& opt, const MemoryModel& memory, double memory_cap = 0,
                                AggregateStats* stats = nullptr);

}  // namespace ppsched
