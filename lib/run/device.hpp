// The device seam of `ppsched run`: everything the engine asks of a GPU, and nothing more.
//
// Two implementations: the CUDA one (lib/run/cuda/, built only where nvcc exists) and a fake one
// (fake_device.hpp) that replays expected durations with CUDA's stream and event semantics, so
// the engine, the plan and the statistics are tested on machines without a GPU.
//
// The protocol, as the engine drives it:
//   runtime.discover()                once per process, by the command, never by the engine
//   runtime.open(discovery)           once per process: contexts, handles
//   (or runtime.open_member(...)      once per process of a multi-process run: one device, and the
//                                     communicator every process joins)
//   device.setup(plan)                per schedule: streams, events, weights, workspaces
//   per iteration:
//     device.begin_iteration()
//     device.wait / launch / record   in the plan's host order (a topological order: see plan.hpp)
//     device.end_iteration(...)       blocks until the iteration is done, returns its spans
//
// Semantics every implementation keeps (they are CUDA's):
//   - Streams run their launches in enqueue order, one at a time.
//   - wait(stream, event) makes later work on `stream` wait for the most recent record(event) at
//     the time of the call; waiting on an event never recorded in this iteration is a no-op
//     (CUDA's cudaStreamWaitEvent), which is why the host order must be checked before launch.
//   - Buffers in Work::allocs are allocated on the launch's stream just before its work, and
//     those in Work::frees released just after it (stream-ordered, cudaMallocAsync style).
//   - Multi-process (run/distributed.hpp): Send, SendDone and Recv move a transfer between the
//     processes of two ranks. A Send is matched with the peer's Recv in the order both were
//     launched, and the sender's stream is busy until the receive has taken the bytes (SendDone
//     ends there): NCCL's rendezvous, which is what it does above NCCL_BUFFSIZE (4 MiB); smaller
//     sends may finish once their bytes have left. The validator checks schedules under
//     rendezvous, the stricter of the two.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/action.hpp"
#include "run/process_group.hpp"

namespace ppsched::run {

inline constexpr std::uint32_t kNoBuffer = 0xFFFFFFFF;

/// How many streams each rank has on its device. They are numbered rank * kStreamsPerRank + kind,
/// kind 0 compute, 1 send (which also runs the receives of a schedule with SEND/RECV: plan.hpp)
/// and 2 recv: the order of the simulator's Stream (sim/timeline.hpp), which this seam cannot
/// include; plan.cpp, which maps one onto the other, checks that they agree.
inline constexpr std::uint32_t kStreamsPerRank = 3;
/// Stream `kind` (0 compute, 1 send, 2 recv) of rank `rank`.
constexpr std::uint32_t stream_of(std::uint32_t rank, std::uint32_t kind = 0) { return rank * kStreamsPerRank + kind; }
/// The rank whose stream `stream` is.
constexpr std::uint32_t rank_of_stream(std::uint32_t stream) { return stream / kStreamsPerRank; }
/// Which of its rank's streams `stream` is: 0 compute, 1 send, 2 recv.
constexpr std::uint32_t stream_kind(std::uint32_t stream) { return stream % kStreamsPerRank; }
constexpr bool is_compute_stream(std::uint32_t stream) { return stream_kind(stream) == 0; }

/// What a launch does on the device.
enum class WorkKind : std::uint8_t {
  None,          ///< nothing but its timing (UNSHARD, RESHARD, REDUCE_GRAD, a SEND's completion)
  Forward,       ///< Y = X W for each layer of the stage
  InputGrad,     ///< dX = dY W^T for each layer (I)
  WeightGrad,    ///< dW = X^T dY for each layer (W)
  FullBackward,  ///< InputGrad then WeightGrad (B)
  Copy,          ///< move copy_bytes from buffer `input` (on rank copy_from) into buffer `output`
  Send,          ///< multi-process: send copy_bytes to rank `peer` (ncclSend)
  SendDone,      ///< multi-process: the Send before it on this stream has been received (ends there)
  Recv,          ///< multi-process: receive copy_bytes from rank `peer` into `output` (ncclRecv)
};

/// One launch. Trivially copyable; buffers are indices into DevicePlan::buffers.
struct Work {
  WorkKind kind = WorkKind::None;
  ActionKind action = ActionKind::Idle;  ///< the schedule's action this launch runs (for messages)
  std::uint32_t rank = 0;
  std::uint32_t stage = 0;
  std::uint32_t microbatch = 0;
  /// How long the plan expects it to take, in µs (from the cost table and comm model). The synthetic
  /// workload spins this long; the fake device takes exactly this long (times its jitter).
  double expected_us = 0;
  std::uint32_t stash = kNoBuffer;   ///< the (stage, microbatch) activation stash F writes and I/W read
  std::uint32_t input = kNoBuffer;   ///< received activation (F) or gradient (I, B); a Copy's source
  std::uint32_t output = kNoBuffer;  ///< a Copy's destination
  std::uint32_t copy_from = 0;       ///< a Copy's source rank
  std::uint64_t copy_bytes = 0;
  std::uint32_t peer = 0;   ///< Send, SendDone, Recv: the other rank
  std::uint32_t label = 0;  ///< index into DevicePlan::labels (NVTX range name)
  std::uint8_t alloc_count = 0, free_count = 0;
  std::uint32_t allocs[2] = {kNoBuffer, kNoBuffer};            ///< allocated before the work, on its stream
  std::uint32_t frees[3] = {kNoBuffer, kNoBuffer, kNoBuffer};  ///< released after it, on its stream
};

/// A buffer the plan allocates and frees once per iteration.
struct BufferSpec {
  std::uint32_t rank = 0;
  std::uint64_t bytes = 0;
};

/// The shape of the GEMM workload: every stage is `layers` linear layers of hidden x hidden,
/// applied to `tokens` rows per microbatch, in `element_bytes`-wide floats (2: bf16, 4: fp32).
struct GemmShape {
  std::uint32_t layers = 4;
  std::uint32_t hidden = 4096;
  std::uint32_t tokens = 4096;
  std::uint32_t element_bytes = 2;
  std::uint64_t flops_per_pass() const {  ///< one of F, I or W over the whole stage
    return 2ull * layers * tokens * static_cast<std::uint64_t>(hidden) * hidden;
  }
  std::uint64_t stash_bytes() const {  ///< each layer's input, plus each layer's dY from I for W
    return 2ull * layers * tokens * static_cast<std::uint64_t>(hidden) * element_bytes;
  }
  std::uint64_t boundary_bytes() const { return static_cast<std::uint64_t>(tokens) * hidden * element_bytes; }
  std::uint64_t weight_bytes() const {  ///< weights and their gradients, one stage
    return 2ull * layers * static_cast<std::uint64_t>(hidden) * hidden * element_bytes;
  }
};

enum class Workload : std::uint8_t { Gemm, Synthetic };

/// What a device must prepare for one schedule. Streams are numbered by stream_of(rank, kind);
/// events and spans are numbered by the plan.
struct DevicePlan {
  Workload workload = Workload::Gemm;
  GemmShape shape;
  std::vector<int> device_of_rank;           ///< index into Discovery::devices, per rank
  std::vector<std::uint32_t> rank_of_stage;  ///< which rank holds each stage's weights
  std::uint32_t event_count = 0;             ///< dependency events
  std::vector<std::uint32_t> event_stream;   ///< the one stream that records each event
  std::uint32_t span_count = 0;              ///< timed launches per iteration
  std::vector<std::uint32_t> span_stream;    ///< the one stream each span is launched on
  std::vector<BufferSpec> buffers;
  std::vector<std::string> labels;  ///< NVTX range names ("2F5"), indexed by Work::label
  /// Multi-process runs: the process of each rank and this process (empty: every rank is here).
  /// A device prepares streams, weights and buffers of its own ranks only.
  std::vector<std::int32_t> process_of_rank;
  std::int32_t process = 0;
  std::uint32_t stream_count() const { return static_cast<std::uint32_t>(device_of_rank.size()) * kStreamsPerRank; }
  bool here(std::uint32_t rank) const { return process_of_rank.empty() || process_of_rank.at(rank) == process; }
};

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  std::uint64_t total_memory_bytes = 0;
  int sm_count = 0;
};

/// What discovery found. Anything but Ok means `ppsched run` exits 77 and says `message`.
struct Discovery {
  enum class Status : std::uint8_t { Ok, NotBuilt, NoDriver, NoDevice, Error };
  Status status = Status::NotBuilt;
  std::string message;  ///< why not Ok: the call and its error
  std::string backend;  ///< "cuda" or "fake"
  std::string driver_version, runtime_version;
  std::vector<DeviceInfo> devices;
  /// Ranks on one of these devices take turns on its compute when their kernels each fill it
  /// (the GEMM workload on a GPU); the fake device runs every stream as if it had the device to
  /// itself.
  bool compute_is_shared = false;
  /// Settings of the process that change how the device runs streams ("NAME=value (why)").
  std::string settings;
};

/// Measured device memory of one iteration, per device (index into Discovery::devices).
struct MemoryUse {
  std::vector<std::uint64_t> peak_buffer_bytes;  ///< high-water mark of the plan's buffers
  std::vector<std::uint64_t> fixed_bytes;        ///< weights, gradients and workspaces
};

/// A device failure: names the call, and the action and rank when a launch failed.
class DeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One process's devices, after discovery.
class Device {
 public:
  virtual ~Device() = default;
  /// Prepares a schedule's streams, events, weights and workspaces; frees the previous one's.
  virtual void setup(const DevicePlan& plan) = 0;
  virtual void begin_iteration() = 0;
  virtual void wait(std::uint32_t stream, std::uint32_t event) = 0;
  virtual void record(std::uint32_t stream, std::uint32_t event) = 0;
  /// Enqueues `work` on `stream`, timed as span `span`.
  virtual void launch(std::uint32_t stream, const Work& work, std::uint32_t span) = 0;
  /// Waits for the iteration, then writes each span's start and end (µs from the iteration's
  /// start on its device) and returns the iteration's time (µs, the latest end).
  virtual double end_iteration(std::span<double> span_start_us, std::span<double> span_end_us) = 0;
  /// The memory the last iteration used.
  virtual MemoryUse memory_use() const = 0;
  /// Multi-process runs, before setup: the one-way time of moving `bytes` to and from process
  /// `peer` (half the median round trip of `repeats` ping-pongs, µs). Both processes call it at
  /// the same point; the lower process sends first. Throws DeviceError.
  virtual double ping_pong_us(int peer, std::uint64_t bytes, int repeats) = 0;
  /// Seconds the host has spent blocked on other processes inside launch() so far (the fake
  /// backend's transfers; 0 where launches never block the host).
  virtual double host_wait_s() const { return 0; }
};

/// This process's part in a multi-process run.
struct GroupMembership {
  ProcessGroup* group = nullptr;  ///< the launcher's processes (the fake device moves its bytes over it)
  int device = 0;                 ///< index into Discovery::devices: the one device this process drives
  Bytes comm_id;                  ///< DeviceRuntime::new_comm_id() of process 0, broadcast to all
  double timeout_s = 60;          ///< no blocking wait of the device lasts longer (DeviceError)
};

/// How a process reaches its devices. The command calls discover() once, at its start, and
/// open() (or open_member()) once; the engine only ever sees the Device.
class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;
  virtual Discovery discover() = 0;
  /// Opens the devices `discovery` found (status Ok). Throws DeviceError.
  virtual std::unique_ptr<Device> open(const Discovery& discovery) = 0;
  /// Multi-process runs, on process 0 only: the id of the communicator all processes will join
  /// (ncclGetUniqueId). Throws DeviceError.
  virtual Bytes new_comm_id() = 0;
  /// Multi-process runs: opens one device and joins the communicator of `member.comm_id`, eagerly
  /// (every process calls it at start, in the same order). Throws DeviceError.
  virtual std::unique_ptr<Device> open_member(const Discovery& discovery, const GroupMembership& member) = 0;
};

/// The CUDA runtime; where ppsched was built without CUDA, one whose discover() says NotBuilt.
/// Constructing it touches no CUDA API.
std::unique_ptr<DeviceRuntime> make_cuda_runtime();

}  // namespace ppsched::run
