// The timing engine of `ppsched run`: enqueues a plan on a device iteration after iteration, times
// every launch, and stops by the nvbench rule (stats.hpp). It never discovers or opens devices:
// it is handed one.
//
// What it measures per iteration: the iteration time (the latest end of any launch, from the
// iteration's start) and each launch's span. Per (stage, kind) it keeps every compute launch's
// duration, so the cost table made of it holds medians of real launches (measured_costs; the CSV
// is written by parse/cost_table.hpp), which `ppsched simulate --costs` reads back.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/schedule.hpp"
#include "model/costs.hpp"
#include "run/device.hpp"
#include "run/plan.hpp"
#include "run/stats.hpp"
#include "sim/timeline.hpp"

namespace ppsched::run {

/// Seconds on the steady clock since its epoch: what MeasureOptions::wall_clock defaults to, and
/// what a multi-process run's start-up is timed with.
double steady_seconds();

/// Keeps the processes of a multi-process run in step (run/distributed.hpp implements it over a
/// ProcessGroup): every process calls these at the same points of every iteration, warm-up
/// included, so their collectives match.
class IterationSync {
 public:
  virtual ~IterationSync() = default;
  /// Before the iteration is enqueued (CUDA: a barrier, so all processes start it together).
  virtual void before_iteration() = 0;
  /// The iteration's time over all processes, given this process's (µs from the common start).
  virtual double iteration_us(double local_us) = 0;
  /// Process 0's decision (it alone applies the stop rule and sees Ctrl-C), on every process.
  virtual StopReason agree(StopReason local) = 0;
};

struct MeasureOptions {
  std::size_t warmup = 5;
  StopRule rule;
  /// Set by a signal handler: the engine stops at the next iteration boundary.
  const std::atomic<bool>* interrupted = nullptr;
  /// Seconds since an arbitrary start; defaults to a steady clock (tests pass their own).
  std::function<double()> wall_clock;
  /// Multi-process runs: keeps this process in step with the others (null: a single process).
  IterationSync* sync = nullptr;
};

/// Durations of one action kind on one stage, over every timed launch.
struct KindTiming {
  std::uint32_t stage = 0;
  ActionKind kind = ActionKind::Idle;
  SampleStats stats;  ///< µs
};

struct Measurement {
  std::size_t warmup = 0;
  std::vector<double> iteration_us;  ///< one per timed iteration, in order
  SampleStats iteration;
  StopReason stop = StopReason::NotYet;
  double wall_s = 0;
  /// Compute kinds (F, B, I, W, UNSHARD, RESHARD, REDUCE_GRAD) and transfers (RECV_F, RECV_B:
  /// the copies), sorted by stage then kind.
  std::vector<KindTiming> kinds;
  /// Every launch's start and end in the last timed iteration (µs), for the trace.
  std::vector<double> last_start_us, last_end_us;
  MemoryUse memory;
  /// Host time to enqueue one launch, µs: the timed iterations' enqueue time, less what the host
  /// spent blocked on other processes (Device::host_wait_s), over their launches.
  double host_us_per_launch = 0;
};

/// Runs `plan` on `device` (already set up with plan.device) until the stop rule holds.
/// Throws DeviceError from the device.
Measurement measure(Device& device, const RunPlan& plan, const MeasureOptions& opt);

/// Each compute kind's duration with nothing beside it on its device: `iterations` iterations of
/// `plan` with every launch of a device on one stream (the compute stream of its first rank), in
/// the plan's host order, so no two launches of a device overlap. Where ranks share a device, the
/// durations measure() keeps include the time the device gave the other ranks; these are what a
/// cost table must hold. Single-process runs only. Throws DeviceError from the device.
std::vector<KindTiming> measure_isolated(Device& device, const RunPlan& plan, std::size_t iterations);

/// Checks the last timed iteration against the plan: every launch started no earlier than the
/// end of the launch before it on its stream and of every launch whose event it waited for (on
/// the same device, where times are comparable), within `tolerance_us`. A violation means the
/// device did not honour a dependency: the run raced. Returns the first one, or an empty string.
std::string check_measured_order(const RunPlan& plan, const Measurement& m, double tolerance_us);

/// The measured cost table's rows: each compute kind's median per stage, sorted by stage then
/// kind (transfers are left out: their time comes from the topology). parse/cost_table.hpp
/// writes them as what `ppsched simulate --costs` reads.
std::vector<CostRow> measured_costs(const std::vector<KindTiming>& kinds);
inline std::vector<CostRow> measured_costs(const Measurement& m) { return measured_costs(m.kinds); }

/// The last timed iteration of `plan` as a Timeline in µs, so simulate's views (trace, Gantt,
/// memory) read it as they read a simulation of the plan's schedule.
Timeline measured_timeline(const RunPlan& plan, const Measurement& m);

}  // namespace ppsched::run
