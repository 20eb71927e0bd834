// The CUDA implementation of the device seam (run/device.hpp): real streams, events, cuBLAS
// GEMMs, peer copies and a stream-ordered memory pool per GPU.
//
// What it keeps per schedule (setup):
//   - 3 non-blocking streams per rank on the rank's GPU (stream id stream_of(rank, kind), run/device.hpp).
//   - each dependency event on the GPU of the one stream that records it (DevicePlan::event_stream),
//     each span's start and end timing events on the GPU of its stream (DevicePlan::span_stream):
//     CUDA records an event only on a stream of the event's own device.
//   - Gemm workload: each stage's W and dW (layers x hidden x hidden) on its rank's GPU, a cuBLAS
//     workspace per rank.
//   - per rank a scratch area of two halves: the GEMM operands a launch without a (big enough)
//     buffer reads and writes, and the source (first half) and fallback destination (second half)
//     of copies. The plan never names a copy's source buffer, so copies read the sender's scratch.
// The plan's buffers come from one memory pool per GPU (cudaMallocFromPoolAsync on the launch's
// stream, cudaFreeAsync after it), whose used-memory high-water mark is the iteration's peak.
//
// Multi-process mode (open_member): one GPU and the NCCL communicator of all processes. The plan
// still numbers streams, events and spans over every rank; only those of this process's ranks
// exist here, and Send and Recv move transfers to the other processes (cuda_member.cpp). No wait
// blocks longer than the membership's timeout: a peer that dies ends the run with a message.
#pragma once

#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "nccl_comm.hpp"
#include "run/device.hpp"
#include "run/overdue.hpp"

namespace ppsched::run::cuda {

class CudaDevice final : public Device {
 public:
  /// Opens the GPUs with these CUDA ordinals, in Discovery::devices order: peer access between
  /// every pair that allows it, a cuBLAS handle and a memory pool each. Throws DeviceError.
  explicit CudaDevice(const std::vector<int>& ordinals);
  /// Multi-process mode: this process's part of the run.
  struct Member {
    int device = 0;                ///< its GPU's index into Discovery::devices
    std::size_t device_count = 1;  ///< Discovery::devices.size(): MemoryUse is indexed like it
    double timeout_s = 60;         ///< the deadline of every wait for the GPU or a peer
  };
  /// Opens the GPU with CUDA ordinal `ordinal` as above, moving transfers over `comm`, which
  /// every process has joined. Throws DeviceError.
  CudaDevice(int ordinal, const Member& member, std::unique_ptr<NcclComm> comm);
  ~CudaDevice() override;
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  void setup(const DevicePlan& plan) override;
  void begin_iteration() override;
  void wait(std::uint32_t stream, std::uint32_t event) override;
  void record(std::uint32_t stream, std::uint32_t event) override;
  void launch(std::uint32_t stream, const Work& work, std::uint32_t span) override;
  double end_iteration(std::span<double> span_start_us, std::span<double> span_end_us) override;
  MemoryUse memory_use() const override { return memory_; }
  /// Both processes enqueue every round at once: the starting one times each round trip with
  /// events, then sends its figure to the echoing one, so both return the same value.
  double ping_pong_us(int peer, std::uint64_t bytes, int repeats) override;

 private:
  struct Gpu {
    int ordinal = 0;
    cublasHandle_t blas = nullptr;
    cudaMemPool_t pool = nullptr;
    std::vector<bool> peer;  ///< peer[j]: this GPU maps GPU j's memory (peer access enabled)
    // Per schedule:
    bool used = false;
    std::int64_t first_stream = -1;         ///< the stream that records iteration_start
    cudaEvent_t iteration_start = nullptr;  ///< what this GPU's span times are relative to
  };
  struct Stage {
    char* w = nullptr;  ///< layers x hidden x hidden
    char* dw = nullptr;
  };
  struct Rank {
    char* scratch = nullptr;  ///< two halves of half_bytes
    std::uint64_t half_bytes = 0;
    void* workspace = nullptr;  ///< cuBLAS workspace of the rank's compute stream
  };
  /// A launch's GEMM operands: where its activations come from and go to.
  struct Operands;
  static constexpr std::uint32_t kNoSpan = 0xFFFFFFFF;

  void open_gpus(const std::vector<int>& ordinals);
  void close_gpus() noexcept;
  void release() noexcept;
  void validate(const DevicePlan& plan) const;
  void use(int gpu, const Where& where);
  char* device_alloc(int gpu, std::uint64_t bytes);
  char* live_buffer(std::uint32_t buffer, std::uint64_t min_bytes) const;
  void run_gemms(std::uint32_t stream, const Work& work, const Where& where);
  void run_copy(std::uint32_t stream, const Work& work, const Where& where);
  void gemm(const Where& where, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void* a,
            const void* b, void* c, float beta);
  Where where_of(const Work& work) const;
  bool here(std::uint32_t rank) const { return rank < gpu_of_rank_.size() && gpu_of_rank_[rank] >= 0; }
  std::size_t memory_slot(std::size_t gpu) const { return comm_ ? static_cast<std::size_t>(member_.device) : gpu; }

  // Multi-process mode (cuda_member.cpp).
  void validate_member(const DevicePlan& plan) const;
  void run_transfer(std::uint32_t stream, const Work& work, const Where& where);
  void await_iteration();
  /// Polls `finished` and NCCL's asynchronous error every ~100 µs until `finished` holds
  /// (returns true) or the deadline passes or NCCL reports an error (returns false, with
  /// `nccl_error` set in the latter case). Then the caller aborts the communicator and throws.
  bool await(const std::function<bool()>& finished, std::string& nccl_error);
  bool event_done(cudaEvent_t event, const Where& where) const;
  /// Aborts the communicator if a stream still has work (an iteration that threw): that work
  /// may wait on a peer forever, and release() synchronizes the device.
  void abort_if_busy() noexcept;

  std::vector<Gpu> gpus_;
  int current_ = -1;  ///< the GPU (index into gpus_) this thread last made current

  DevicePlan plan_;
  std::uint64_t activation_bytes_ = 0;  ///< tokens x hidden x element_bytes: one layer's X or dY
  std::vector<int> gpu_of_rank_;
  std::vector<cudaStream_t> streams_;
  std::vector<cudaEvent_t> events_;
  std::vector<cudaEvent_t> span_start_, span_end_;
  std::vector<bool> span_launched_;  ///< in this iteration
  std::vector<Stage> stages_;
  std::vector<Rank> ranks_;
  std::vector<void*> allocations_;  ///< cudaMalloc'd for this schedule: weights, scratch, workspaces
  std::vector<void*> buffer_;       ///< the plan's buffers, while allocated
  std::vector<bool> buffer_live_;
  MemoryUse memory_;

  // Multi-process mode only (comm_ null otherwise).
  Member member_;
  std::unique_ptr<NcclComm> comm_;
  std::uint64_t transfer_piece_ = 0;           ///< the same on every process: see setup()
  std::vector<LaunchRef> launched_;            ///< this iteration's launches, in launch order
  std::vector<std::uint32_t> last_on_stream_;  ///< per stream, the span launched last (or kNone)
};

}  // namespace ppsched::run::cuda
