// The one NCCL communicator of a multi-process run, as the CUDA backend uses it: joined once at
// start by every process (creating communicators lazily, pair by pair, hangs when two processes
// create them in different orders), then point-to-point transfers on the device's streams.
//
// This header names no NCCL type, so the backend compiles where nccl.h was missing at build
// time: nccl_missing.cpp then implements this class, and joining throws saying why.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <span>
#include <string>

#include "cuda_check.hpp"
#include "run/device.hpp"

struct ncclComm;  // nccl.h: typedef struct ncclComm* ncclComm_t

namespace ppsched::run::cuda {

class NcclComm {
 public:
  /// Process 0's id of a new communicator (ncclGetUniqueId, 128 bytes). Throws DeviceError.
  static Bytes new_id();

  /// Joins the communicator `id` as process `rank` of `size`, on the GPU with CUDA ordinal
  /// `ordinal` (ncclCommInitRank, which returns once every process has joined). Throws
  /// DeviceError when NCCL cannot be loaded, fails, or not all joined within `timeout_s`.
  NcclComm(const Bytes& id, int size, int rank, int ordinal, double timeout_s);
  /// ncclCommDestroy; ncclCommAbort instead once aborted or NCCL reports an error, since
  /// destroying waits for operations a dead peer never completes.
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  /// One contiguous part of a transfer. NCCL matches a send with the peer's receive of the same
  /// size, so both sides cut a transfer into the same pieces.
  struct Piece {
    void* data;
    std::uint64_t bytes;
  };
  enum class Way : std::uint8_t { Send, Recv };
  /// Enqueues ncclSend or ncclRecv of each piece, to or from process `peer`, on `stream`; several
  /// pieces go in one group (one launch). Throws DeviceError naming `where`.
  void post(Way way, int peer, std::span<const Piece> pieces, cudaStream_t stream, const Where& where);

  /// The error NCCL found in the background (a peer that died, a network failure), as
  /// "ncclCommGetAsyncError reported ncclRemoteError: ..."; empty while there is none.
  std::string async_error();
  /// Ends every operation of the communicator still running on the GPU (ncclCommAbort), so that
  /// streams waiting on a dead peer drain. The communicator cannot be used after.
  void abort() noexcept;
  bool aborted() const { return aborted_; }

  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  ncclComm* comm_ = nullptr;
  int rank_ = 0, size_ = 0;
  bool aborted_ = false;
};

}  // namespace ppsched::run::cuda
