// Benchmarking schedules on one node: what `ppsched run` does, as a library function so tests
// drive it through a fake device. Devices are discovered once and opened once, here, however many
// schedules run; the engine and the plans never reach for them again.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/schedule.hpp"
#include "run/device.hpp"
#include "run/engine.hpp"
#include "run/plan.hpp"
#include "run/process_group.hpp"
#include "sim/memory.hpp"
#include "sim/timed.hpp"

namespace ppsched::run {

/// Which device each of `ranks` ranks runs on: `ordinals` lists the devices to use (empty: all
/// `visible` ones); ranks are spread evenly in contiguous blocks, so neighbouring stages share a
/// device when there are more ranks than devices. Throws UserError for an ordinal that is not
/// visible, or when there is no device.
std::vector<int> map_ranks_to_devices(std::uint32_t ranks, std::size_t visible, const std::vector<int>& ordinals);

/// One schedule to run.
struct RunRequest {
  std::string name;
  Schedule schedule;
  std::vector<std::uint32_t> stage_to_rank;
  PlanOptions plan;  ///< workload, costs (expected durations), comm; device_of_rank is filled in
  TimedOptions sim;  ///< what the simulator is given for the prediction
  /// Predict with the cost table this run measures instead of sim.costs (the GEMM workload
  /// without a given cost table: does the simulator, given real per-action times, predict the
  /// real iteration?).
  bool predict_from_measurement = false;
};

struct RunResult {
  std::string name;
  Schedule schedule;
  std::uint32_t microbatches = 0;
  RunPlan plan;
  Measurement measured;
  /// Where ranks shared a device's compute: each kind's duration alone on its device
  /// (measure_isolated), which the prediction and the cost table use; empty otherwise.
  std::vector<KindTiming> isolated;
  /// Whether the prediction had the ranks of one device take turns on it (sim/timed.hpp).
  bool shared_compute = false;
  /// The durations a cost table of this run holds: the isolated ones where there are some.
  const std::vector<KindTiming>& cost_kinds() const { return isolated.empty() ? measured.kinds : isolated; }
  double simulated_us = 0;                    ///< the timed simulator's makespan
  std::vector<std::uint64_t> predicted_peak;  ///< per device: the memory model's peak
  /// measured median / simulated; 0 when the simulation says 0.
  double ratio() const { return simulated_us > 0 ? measured.iteration.median / simulated_us : 0.0; }
};

/// A process of a multi-process run, as process 0 reports it.
struct ProcessRow {
  int process = 0;
  ProcessPlace place;
  std::int32_t rank = -1;  ///< the pipeline rank it ran; -1: none (--rank-map left it idle)
  int ordinal = 0;         ///< its device
  std::string device;      ///< the device's name
  int discoveries = 0;     ///< device discoveries it ran (must be 1)
  int opens = 0;           ///< device opens (must be 1)
};

/// A class of link measured by ping-pong at start, between two processes.
struct MeasuredLink {
  std::string link;  ///< "intra_node" or "inter_node" (the topology file's names)
  int from = 0, to = 0;
  double latency_us = 0;    ///< one way, smallest message
  double bytes_per_us = 0;  ///< from the large message's extra time over the small one's; 0: not measured
};

struct BenchmarkReport {
  Discovery discovery;
  std::vector<int> ordinals;  ///< the devices used
  std::vector<RunResult> results;
  bool interrupted = false;
  // Multi-process runs only (run/distributed.hpp), at process 0:
  std::string launcher;  ///< the process group's implementation; empty for a single process
  std::vector<ProcessRow> processes;
  std::vector<MeasuredLink> links;
  std::optional<Topology> measured_topology;  ///< where the ranks ran, with the measured links
  double startup_s = 0;                       ///< joining the communicator and the ping-pong, the slowest process
};

/// Discovers devices once; when usable, opens them once and runs every request in turn (each
/// checked with check_host_order before its first launch, and its last iteration with
/// check_measured_order after it). A request that fails throws:
/// PlanError, DeviceError or TimedDeadlock. Stops early (report.interrupted) when
/// opt.interrupted is set.
BenchmarkReport run_benchmarks(DeviceRuntime& runtime, std::vector<RunRequest> requests,
                               const std::vector<int>& ordinals, const MeasureOptions& opt);

/// Fills `res.simulated_us` and `res.predicted_peak` (over `devices` devices) from the timed
/// simulator given `sim`; then, when `req.predict_from_measurement`, simulates again with the cost
/// table `res.measured` holds. `res.plan` and `res.measured` must be set.
void predict(const RunRequest& req, TimedOptions sim, std::size_t devices, RunResult& res);

/// The memory model's peak per device for `plan`'s buffers on the simulated timeline: stash
/// bytes per stage, held from F to the last backward piece, ranks on one device summed in time.
std::vector<std::uint64_t> predicted_device_peak(const Schedule& s, const Timeline& simulated, const RunPlan& plan,
                                                 std::size_t devices);

}  // namespace ppsched::run
