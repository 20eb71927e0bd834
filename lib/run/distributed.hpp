// `ppsched run` across processes: one process per GPU (per pipeline rank), started by the
// cluster's launcher, the schedule's SENDs and RECVs carried by NCCL (or, with the fake backend,
// by the launcher's MPI with the same semantics).
//
// Every process builds the same plan of the whole schedule (run/plan.hpp), so launch indices,
// events and jitter agree everywhere, and keeps its own rank's part (localize_plan): a SEND
// becomes Send + SendDone, a RECV a Recv, and a wait on another process's event is dropped,
// since matching a Send with its Recv is what orders them. Process 0 gathers what the others
// measured into one Measurement of the whole plan, so the report, trace and cost table are those
// of a single-process run.
//
// Clocks: the fake backend's device time starts at 0 on every process at each iteration, so
// its times are aligned by construction. CUDA processes start each iteration after a barrier and
// time from their own start event, so times across processes are aligned to within the
// barrier's exit skew (microseconds on a node, tens across nodes).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/comm.hpp"
#include "run/benchmark.hpp"
#include "run/engine.hpp"
#include "run/plan.hpp"
#include "run/process_group.hpp"

namespace ppsched::run {

/// Which process runs each pipeline rank: `map[r]` when a map is given (--rank-map), else rank r
/// on process r. Throws UserError: a map of the wrong length, a process out of range
/// or given two ranks, or without a map a process count other than the rank count.
std::vector<std::int32_t> place_ranks(std::uint32_t ranks, int processes, const std::vector<int>& map);

/// The launches of `global` that process `me` runs, in the same host order; see above. Launch
/// labels stay those of the whole plan; every rank is on `device` (the process's one device, an
/// index into Discovery::devices). Throws PlanError when a transfer between processes has no SEND
/// and RECV (a compute-only schedule: lower it to send/recv first).
RunPlan localize_plan(const RunPlan& global, int me, const std::vector<std::int32_t>& process_of_rank, int device = 0);

/// Keeps processes in step over a ProcessGroup: the iteration's time is the latest of any
/// process; process 0 decides when to stop, except that an interrupt on any process stops every
/// process at the same iteration. With `barrier` every iteration starts after one.
class GroupSync final : public IterationSync {
 public:
  GroupSync(ProcessGroup& group, double timeout_s, bool barrier)
      : group_(group), timeout_s_(timeout_s), barrier_(barrier) {}
  void before_iteration() override;
  double iteration_us(double local_us) override;
  StopReason agree(StopReason local) override;

 private:
  ProcessGroup& group_;
  double timeout_s_;
  bool barrier_;
};

/// One process's share of a measurement (its launches' last spans, its kinds, its device's
/// memory) ...
Bytes pack_measurement(const RunPlan& local, const Measurement& m);
/// ... and the whole plan's, merged at process 0 from every process's share (indexed by process;
/// iterations and the stop are `own`'s, the same everywhere). Memory is per process. Throws
/// std::runtime_error on a share that does not parse.
Measurement merge_measurements(const RunPlan& global, const Measurement& own, const std::vector<Bytes>& shares);

/// What a multi-process run needs besides the single-process one.
struct DistributedOptions {
  std::vector<int> rank_map;            ///< empty: rank r on process r
  double timeout_s = 60;                ///< every blocking wait on another process
  bool barrier_each_iteration = false;  ///< CUDA: align iteration starts
  /// Link ping-pong at start: small (latency) and large (bandwidth) messages, repeats each.
  std::uint64_t ping_small_bytes = 8, ping_large_bytes = 1u << 22;
  int ping_repeats = 10;
  /// When this process began joining the group (steady clock, seconds since its epoch), so the
  /// reported start-up includes the launcher's part; 0: from run_distributed's start.
  double started_at_s = 0;
  /// Predict with the topology of where the processes are and the measured links, unless the
  /// request's comm model has a topology (CUDA; the fake backend replays the given model).
  bool predict_with_measured_links = false;
  /// How many times this process ran discovery and opened devices (CountingRuntime::discoveries
  /// and opens), for the report's rows.
  std::function<int()> discoveries, opens;
};

/// Runs every request on all processes of `group` (every process passes the same requests) and
/// returns, at process 0, the report a single process would give plus a row per process and the
/// measured links; the other processes get a report without results. Throws PlanError,
/// DeviceError (naming the rank and launch it was on), GroupError, TimedDeadlock.
BenchmarkReport run_distributed(DeviceRuntime& runtime, ProcessGroup& group, std::vector<RunRequest> requests,
                                const DistributedOptions& dopt, const MeasureOptions& mopt);

/// Counts what a command asks of a runtime: each process must discover and open exactly once.
class CountingRuntime final : public DeviceRuntime {
 public:
  explicit CountingRuntime(DeviceRuntime& inner) : inner_(inner) {}
  Discovery discover() override {
    ++discoveries_;
    return inner_.discover();
  }
  std::unique_ptr<Device> open(const Discovery& d) override {
    ++opens_;
    return inner_.open(d);
  }
  Bytes new_comm_id() override { return inner_.new_comm_id(); }
  std::unique_ptr<Device> open_member(const Discovery& d, const GroupMembership& m) override {
    ++opens_;
    return inner_.open_member(d, m);
  }
  int discoveries() const { return discoveries_; }
  int opens() const { return opens_; }

 private:
  DeviceRuntime& inner_;
  int discoveries_ = 0, opens_ = 0;
};

}  // namespace ppsched::run

namespace ppsched::run {

/// A digest of what a process is about to run: `version` (ppsched's, and the backend), every
/// request's schedule, placement, workload, costs and transfers, the stop rule and the
/// multi-process options. The processes of one run must agree on it.
std::uint64_t run_fingerprint(const std::string& version, const std::vector<RunRequest>& requests,
                              const MeasureOptions& measure, const DistributedOptions& dopt);

/// A digest of this process's own executable (/proc/self/exe), so two builds of one version tell
/// apart; "unknown" where it cannot be read.
std::string executable_digest();

/// Whether every process may start.
struct StartVerdict {
  int exit_code = 0;        ///< 0: all ready; else what every process exits with
  std::string why;          ///< when not ready: which processes, and why
  bool first_ready = true;  ///< process 0 was ready (so the others' own messages are news)
};

/// Each process gives its exit code so far (0: ready to run) and its fingerprint. All are ready
/// when every code is 0 and every fingerprint is process 0's; otherwise every process gets the
/// first failing process's code, or 2 (a usage error) for fingerprints that differ.
StartVerdict agree_to_start(ProcessGroup& group, int my_code, std::uint64_t fingerprint, double timeout_s);

}  // namespace ppsched::run
