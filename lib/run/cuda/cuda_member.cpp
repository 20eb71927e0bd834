// The multi-process half of CudaDevice: checking a plan that spans processes, Send and Recv over
// NCCL, the bounded wait that ends an iteration, and the ping-pong that times a link.
//
// Why every wait here polls instead of blocking in cudaEventSynchronize: a receive whose sender
// died never completes, and a process blocked on it would keep the whole job waiting. Polling
// lets the wait also watch NCCL's asynchronous error and give up at the membership's deadline,
// abort the communicator (which ends the stuck NCCL kernels) and say which launch was stuck.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "cuda_device.hpp"
#include "run/ping_pong.hpp"

namespace ppsched::run::cuda {

namespace {

// Short beside any transfer worth timing, long enough that polling costs the host little.
constexpr auto kPollInterval = std::chrono::microseconds(100);
constexpr int kPingPongWarmups = 2;  // the first round trip also connects the two processes

[[noreturn]] void contract(const std::string& message) { throw DeviceError(message); }

// What one ping-pong allocates; released after the communicator was aborted on a failure (the
// caller declares it outside its try), since cudaFree waits for kernels a dead peer would hold.
struct PingPongKit {
  cudaStream_t stream = nullptr;
  void* buffer = nullptr;
  std::vector<cudaEvent_t> events;  // the starting side's: start and end of each timed round

  PingPongKit() = default;
  PingPongKit(const PingPongKit&) = delete;
  PingPongKit& operator=(const PingPongKit&) = delete;
  ~PingPongKit() {
    for (cudaEvent_t e : events) cudaEventDestroy(e);
    if (buffer) cudaFree(buffer);
    if (stream) cudaStreamDestroy(stream);
    (void)cudaGetLastError();
  }
};

}  // namespace

void CudaDevice::validate_member(const DevicePlan& plan) const {
  const auto ranks = plan.device_of_rank.size();
  const int processes = comm_->size();
  if (plan.process_of_rank.size() != ranks)
    contract("setup: the plan gives a process for " + std::to_string(plan.process_of_rank.size()) + " of " +
             std::to_string(ranks) + " ranks, but this device is one process of " + std::to_string(processes));
  if (plan.process != comm_->rank())
    contract("setup: the plan is process " + std::to_string(plan.process) + "'s, but this device is process " +
             std::to_string(comm_->rank()));
  for (std::size_t r = 0; r < ranks; ++r) {
    const std::int32_t p = plan.process_of_rank[r];
    if (p < 0 || p >= processes)
      contract("setup: rank " + std::to_string(r) + " is placed in process " + std::to_string(p) +
               ", but the run has " + std::to_string(processes));
    // Another process's ranks index that process's devices: only ours are checked.
    if (p == plan.process && plan.device_of_rank[r] != member_.device)
      contract("setup: rank " + std::to_string(r) + " is placed on device " + std::to_string(plan.device_of_rank[r]) +
               ", but this process drives device " + std::to_string(member_.device) + " only");
  }
}

void CudaDevice::run_transfer(std::uint32_t stream, const Work& work, const Where& where) {
  const std::string what(where.what);
  if (!comm_)
    contract("launch of " + what + ": a transfer between processes (Send, SendDone, Recv) needs a multi-process run");
  // Nothing to launch: this span is recorded right behind the ncclSend before it on the stream,
  // so it ends when the send does: once the peer's receive has taken the bytes, or, for a
  // message NCCL's buffers hold (NCCL_BUFFSIZE, 4 MiB by default), once they have left.
  if (work.kind == WorkKind::SendDone) return;
  if (!here(work.rank) || work.peer >= gpu_of_rank_.size() || here(work.peer))
    contract("launch of " + what + ": a transfer between ranks " + std::to_string(work.rank) + " and " +
             std::to_string(work.peer) + ", which are not one in this process and one in another");
  const std::uint64_t bytes = work.copy_bytes;
  if (bytes == 0) return;  // the peer sees the same plan and posts nothing either
  const bool send = work.kind == WorkKind::Send;
  const Rank& rank = ranks_[work.rank];
  // As run_copy: without a buffer of copy_bytes, every piece goes through the same scratch half
  // (sends read the first, receives write the second). The bytes are not used, only moved.
  char* buffer = send ? live_buffer(work.input, bytes) : live_buffer(work.output, bytes);
  char* scratch = send ? rank.scratch : rank.scratch + rank.half_bytes;
  std::vector<NcclComm::Piece> pieces;
  pieces.reserve(static_cast<std::size_t>((bytes + transfer_piece_ - 1) / transfer_piece_));
  for (std::uint64_t off = 0; off < bytes; off += transfer_piece_)
    pieces.push_back({buffer ? buffer + off : scratch, std::min(transfer_piece_, bytes - off)});
  comm_->post(send ? NcclComm::Way::Send : NcclComm::Way::Recv, plan_.process_of_rank[work.peer], pieces,
              streams_[stream], where);
}

bool CudaDevice::event_done(cudaEvent_t event, const Where& where) const {
  const cudaError_t e = cudaEventQuery(event);
  if (e == cudaSuccess) return true;
  if (e == cudaErrorNotReady) return false;  // not an error: the runtime does not record it
  throw_failure(e, "cudaEventQuery", where);
}

bool CudaDevice::await(const std::function<bool()>& finished, std::string& nccl_error) {
  using Clock = std::chrono::steady_clock;
  // Clamped so that an infinite timeout does not overflow the clock.
  const double limit_s = std::isfinite(member_.timeout_s) ? std::clamp(member_.timeout_s, 0.0, 1e9) : 1e9;
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limit_s));
  while (!finished()) {
    nccl_error = comm_->async_error();
    if (!nccl_error.empty() || Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPollInterval);
  }
  return true;
}

void CudaDevice::await_iteration() {
  const Where where{"the iteration", Where::kNone, gpus_[0].ordinal};
  use(0, where);
  // Streams run in order, so the iteration is over once each stream's last launch has ended.
  std::vector<cudaEvent_t> last;
  for (std::uint32_t span : last_on_stream_)
    if (span != kNoSpan) last.push_back(span_end_[span]);
  std::string nccl_error;
  const bool done =
      await([&] { return std::all_of(last.begin(), last.end(), [&](cudaEvent_t e) { return event_done(e, where); }); },
            nccl_error);
  if (done) return;
  // Named before the abort, which ends the stuck launches and so would make them look finished.
  const LaunchRef* stuck = first_unfinished(std::span<const LaunchRef>(launched_), [&](std::uint32_t span) {
    return cudaEventQuery(span_end_[span]) == cudaSuccess;
  });
  (void)cudaGetLastError();
  comm_->abort();
  throw DeviceError(overdue_message(launch_text(stuck, "process " + std::to_string(comm_->rank()) + ": the iteration"),
                                    member_.timeout_s, nccl_error));
}

void CudaDevice::abort_if_busy() noexcept {
  if (!comm_) return;
  for (cudaStream_t s : streams_) {
    if (s && cudaStreamQuery(s) != cudaSuccess) {  // busy, or broken: either way, stop it
      (void)cudaGetLastError();
      comm_->abort();
      return;
    }
  }
}

double CudaDevice::ping_pong_us(int peer, std::uint64_t bytes, int repeats) {
  if (!comm_) throw DeviceError("ping_pong_us needs a multi-process run");
  const int self = comm_->rank();
  if (peer < 0 || peer >= comm_->size() || peer == self)
    throw DeviceError("ping_pong_us: process " + std::to_string(peer) + " is not another process of the run's " +
                      std::to_string(comm_->size()));
  if (repeats < 1) throw DeviceError("ping_pong_us: " + std::to_string(repeats) + " round trips is none to time");
  const std::string what = "the ping-pong of processes " + std::to_string(std::min(self, peer)) + " and " +
                           std::to_string(std::max(self, peer));
  const Where where{what, Where::kNone, gpus_[0].ordinal};
  use(0, where);
  const bool starts = starts_ping_pong(self, peer);
  PingPongKit kit;
  try {
    check(cudaStreamCreateWithFlags(&kit.stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", where);
    // Room for the bytes, and for the figure the starting side sends at the end.
    check(cudaMalloc(&kit.buffer, std::max<std::uint64_t>(bytes, sizeof(double))), "cudaMalloc", where);
    if (starts) {
      kit.events.resize(2 * static_cast<std::size_t>(repeats), nullptr);
      for (cudaEvent_t& e : kit.events) check(cudaEventCreate(&e), "cudaEventCreate", where);
    }
    const NcclComm::Piece data{kit.buffer, bytes};
    const NcclComm::Piece figure{kit.buffer, sizeof(double)};
    auto post = [&](NcclComm::Way way, const NcclComm::Piece& piece) {
      comm_->post(way, peer, std::span<const NcclComm::Piece>(&piece, 1), kit.stream, where);
    };
    // Every round is enqueued at once, so the host's launch latency stays out of the times.
    for (int i = 0; i < kPingPongWarmups + repeats; ++i) {
      const int timed = i - kPingPongWarmups;
      if (starts && timed >= 0) check(cudaEventRecord(kit.events[2 * timed], kit.stream), "cudaEventRecord", where);
      post(starts ? NcclComm::Way::Send : NcclComm::Way::Recv, data);
      post(starts ? NcclComm::Way::Recv : NcclComm::Way::Send, data);
      if (starts && timed >= 0) check(cudaEventRecord(kit.events[2 * timed + 1], kit.stream), "cudaEventRecord", where);
    }
    auto idle = [&] {
      const cudaError_t e = cudaStreamQuery(kit.stream);
      if (e == cudaSuccess) return true;
      if (e == cudaErrorNotReady) return false;
      throw_failure(e, "cudaStreamQuery", where);
    };
    auto wait_idle = [&] {
      std::string nccl_error;
      if (!await(idle, nccl_error)) throw DeviceError(overdue_message(what, member_.timeout_s, nccl_error));
    };
    double one_way = 0;
    if (starts) {
      wait_idle();
      std::vector<double> round_trip_us(static_cast<std::size_t>(repeats));
      for (int r = 0; r < repeats; ++r) {
        float ms = 0;
        check(cudaEventElapsedTime(&ms, kit.events[2 * r], kit.events[2 * r + 1]), "cudaEventElapsedTime", where);
        round_trip_us[r] = 1000.0 * ms;
      }
      one_way = one_way_us(std::move(round_trip_us));
      // The echoing side cannot time a round trip (its rounds start when the data arrives), so
      // it is told this one: both processes then report the same link time.
      check(cudaMemcpyAsync(kit.buffer, &one_way, sizeof one_way, cudaMemcpyHostToDevice, kit.stream),
            "cudaMemcpyAsync", where);
      post(NcclComm::Way::Send, figure);
      wait_idle();
    } else {
      post(NcclComm::Way::Recv, figure);
      wait_idle();  // before the copy: a copy to pageable memory would block the host unbounded
      check(cudaMemcpyAsync(&one_way, kit.buffer, sizeof one_way, cudaMemcpyDeviceToHost, kit.stream),
            "cudaMemcpyAsync", where);
      check(cudaStreamSynchronize(kit.stream), "cudaStreamSynchronize", where);
    }
    return one_way;
  } catch (...) {
    // Rounds cut short leave sends and receives that nothing will match: end them (the run
    // cannot go on without this link anyway), then kit's destructor frees what they used.
    comm_->abort();
    throw;
  }
}

}  // namespace ppsched::run::cuda
