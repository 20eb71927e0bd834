// The run plan: a schedule turned into device launches, waits and records in a host order that
// is a topological order of the dependency graph, plus the buffers each launch allocates and frees.
//
// Why a host order at all: the device executes each stream in enqueue order, and a wait on an
// event that was not yet recorded is a silent no-op (CUDA's cudaStreamWaitEvent). Enqueued in
// program order rank by rank, rank 1's F would wait on rank 0's not-yet-recorded F and race
// ahead. So the host enqueues every launch after all the launches it depends on, and
// check_host_order proves that of the finished plan before anything runs.
//
// Launches per action, on the rank's streams (compute 0; comm 1, which runs the SENDs and RECVs
// in program order, as NCCL's point-to-point ops on one communicator do; recv 2 for implicit
// copies; everything on compute with blocking comms), with the dependencies of the timed
// simulator (sim/timed.hpp):
//   F, B, I, W, OVERLAP_F_B, UNSHARD, RESHARD, REDUCE_GRAD   one launch on compute
//   SEND_F/SEND_B   a "post" on comm (after the producing compute), then, once the matching RECV
//                   has copied, a "done" on comm that waits for the copy: the comm stream is
//                   busy until the transfer ends, as in the simulator
//   RECV_F/RECV_B   the copy itself, on comm, after the partner's post
//   compute-only schedules: a copy on the consumer's recv stream for every input that crosses
//                   ranks (the simulator's implicit transfer)
// Buffers: F allocates its (stage, microbatch) activation stash; the last backward piece (B, or
// W after I) frees it. A copy allocates the received buffer; the compute that consumes it frees it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/schedule.hpp"
#include "model/comm.hpp"
#include "model/costs.hpp"
#include "run/device.hpp"

namespace ppsched::run {

inline constexpr std::uint32_t kNoEvent = 0xFFFFFFFF;
inline constexpr std::uint32_t kNoEntry = 0xFFFFFFFF;

/// One host step: wait on `waits`, launch `work` on `stream` (timed as span = its index in the
/// plan), then record `record` when another stream needs it.
struct HostOp {
  std::uint32_t stream = 0;
  std::uint32_t wait_begin = 0, wait_end = 0;  ///< [begin, end) in RunPlan::waits
  std::uint32_t record = kNoEvent;
  Work work;
};

/// What a schedule action became: its first and last launch (a SEND has two).
struct EntrySpans {
  std::uint32_t first = 0, last = 0;
};

struct RunPlan {
  DevicePlan device;
  std::vector<HostOp> ops;           ///< in host order
  std::vector<std::uint32_t> waits;  ///< event ids, ranges per op
  /// Per non-idle action, rank by rank in program order (the Timeline's entry order).
  std::vector<EntrySpans> entries;
  std::vector<std::uint32_t> entry_step;  ///< the entry's index in its rank's program
  std::vector<std::uint32_t> entry_peer;  ///< a SEND's RECV entry and back; kNoEntry otherwise
  std::vector<std::uint32_t> rank_begin;  ///< ranks + 1 offsets into entries
};

struct PlanOptions {
  Workload workload = Workload::Gemm;
  GemmShape shape;
  bool blocking_comms = false;
  /// Expected durations (Work::expected_us): what the synthetic workload spins and the fake
  /// device takes.
  CostModel costs;
  CommModel comm;
  /// Bytes a transfer moves when the stage spec gives none (0: the GEMM shape's boundary).
  std::uint64_t activation_bytes = 0;
  std::vector<int> device_of_rank;  ///< empty: every rank on device 0
};

/// A plan the engine cannot run: the schedule's dependencies form a cycle (it deadlocks), or
/// the host order broke an invariant. The message names the launches involved.
class PlanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Builds the plan for `s` with stage placement `stage_to_rank`. Throws PlanError.
RunPlan build_run_plan(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank, const PlanOptions& opt);

/// Checks that every wait names an event recorded by an earlier op, every event is recorded
/// once, every buffer is allocated before use and freed once, after its last use, on a stream
/// ordered after its allocation. Returns the first problem, or an empty string.
std::string check_host_order(const RunPlan& plan);

/// Peak number of bytes of the plan's buffers live at once per rank, counted in host order.
std::vector<std::uint64_t> planned_peak_bytes(const RunPlan& plan);

}  // namespace ppsched::run
