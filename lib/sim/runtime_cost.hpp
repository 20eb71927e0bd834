// What a compute-only schedule costs when a runtime runs it, as `tune` ranks it: the one home of
// that judgement, which tune applies to every trial and the automatic search to its answers
// (auto/auto_schedule.hpp, AutoParams::ranked_by), so that the two can never disagree on which
// of two schedules is faster or fits.
//
// The schedule is prepared for the runtime (sim/prepare.hpp: PyTorch's runtime lowers it with its
// recipe and keywords, Megatron's drops nothing it has not got) and timed under the runtime model
// (simulate_runtime); its peak is the byte model's simulated one, or PyTorch's activation slots
// counted over its order when the cap counts slots.
#pragma once

#include <optional>
#include <string>

#include "ir/schedule.hpp"
#include "sim/activation_liveness.hpp"
#include "sim/memory.hpp"
#include "sim/prepare.hpp"
#include "sim/runtime.hpp"
#include "sim/timed.hpp"

namespace ppsched {

/// How schedules are ranked: what runs them, and what their peak and the cap count.
struct RankingRule {
  /// The runner step (Runner::Runtime, the runtime, PyTorch's lowering keywords, the family when
  /// the schedule is one, for the keywords PyTorch's single-stage classes refuse).
  Preparation how;
  RuntimeModel model;
  bool blocking_comms = false;
  /// Nullopt: the byte model's simulated peak; else PyTorch's activation slots at this granularity.
  std::optional<LivenessGranularity> liveness;
  double memory_cap = 0;  ///< in the unit `liveness` picks; 0: none
};

/// What one schedule costs under a RankingRule.
struct RuntimeCost {
  bool ran = false;   ///< prepared and finished in simulation
  bool fits = false;  ///< ran, and its peak fits under the cap
  double makespan = 0, span = 0;
  double iteration_time = 0;  ///< under the model's optimizer: the makespan or the longest span
  double bubble = 0;          ///< 1 - busy / (ranks x iteration time)
  double peak = 0;            ///< the highest rank's, in the cap's unit
  double comm_wait = 0;       ///< summed over the ranks
  std::string note;           ///< why it did not run
  Schedule given;             ///< the compute-only schedule, handed back (prepare_schedule takes it)
};

/// Times `compute_only` under `rule` with the costs and comm of `sim` and the byte model `memory`.
/// A schedule the runtime's lowering rejects, or that does not finish, comes back with ran false
/// and a note; other errors propagate.
RuntimeCost cost_under_runtime(Schedule compute_only, const RankingRule& rule, const TimedOptions& sim,
                               const MemoryModel& memory);

/// Whether `a` ranks ahead of `b` under `objective`: fitting first, then its iteration time, then
/// the other of the two times, then the lower peak. False on a tie.
bool ranks_ahead(const RuntimeCost& a, const RuntimeCost& b, Optimizer objective);

}  // namespace ppsched
