#include "nccl_comm.hpp"

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "nccl_api.hpp"
#include "run/overdue.hpp"

namespace ppsched::run::cuda {

namespace {

// What the thread joining the communicator hands back; shared, because a thread that never
// returns (a process that died before joining) is left behind with it.
struct Joining {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  cudaError_t cuda = cudaSuccess;
  ncclResult_t result = ncclSuccess;
  ncclComm_t comm = nullptr;
};

}  // namespace

Bytes NcclComm::new_id() {
  const NcclApi& api = nccl();
  ncclUniqueId id{};
  check(api.get_unique_id(&id), "ncclGetUniqueId", {"new_comm_id"});
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(id.internal);
  return Bytes(bytes, bytes + sizeof id.internal);
}

NcclComm::NcclComm(const Bytes& id, int size, int rank, int ordinal, double timeout_s) : rank_(rank), size_(size) {
  const Where where{"open", Where::kNone, ordinal};
  const NcclApi& api = nccl();
  ncclUniqueId uid{};
  if (id.size() != sizeof uid.internal)
    throw DeviceError(failure("ncclCommInitRank",
                              "the communicator id has " + std::to_string(id.size()) + " bytes, NCCL's have " +
                                  std::to_string(sizeof uid.internal),
                              where));
  std::memcpy(uid.internal, id.data(), id.size());

  // ncclCommInitRank blocks until every process has joined, with no deadline of its own: a
  // process that died, or an interface NCCL cannot route, would hang this one forever. So it
  // runs on a thread of its own, which is abandoned when the deadline passes.
  auto joining = std::make_shared<Joining>();
  std::thread thread([joining, &api, uid, size, rank, ordinal] {
    ncclComm_t comm = nullptr;
    ncclResult_t result = ncclSuccess;
    const cudaError_t cuda = cudaSetDevice(ordinal);  // the current device is per thread
    if (cuda == cudaSuccess) result = api.comm_init_rank(&comm, size, uid, rank);
    const std::lock_guard lock(joining->mutex);
    joining->cuda = cuda;
    joining->result = result;
    joining->comm = comm;
    joining->done = true;
    joining->done_cv.notify_all();
  });
  std::unique_lock lock(joining->mutex);
  if (!joining->done_cv.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] { return joining->done; })) {
    lock.unlock();
    thread.detach();
    throw DeviceError("ncclCommInitRank had not returned after " + seconds_text(timeout_s) + " on process " +
                      std::to_string(rank) + " of " + std::to_string(size) +
                      ": a process died or hangs, or NCCL cannot reach it (NCCL " + api.version +
                      "; NCCL_DEBUG=INFO says which interface it tried, NCCL_SOCKET_IFNAME picks one)");
  }
  lock.unlock();
  thread.join();
  check(joining->cuda, "cudaSetDevice", where);
  if (joining->result != ncclSuccess)
    throw DeviceError(failure("ncclCommInitRank", error_text(joining->result) + ", NCCL " + api.version, where));
  comm_ = joining->comm;
}

NcclComm::~NcclComm() {
  if (!comm_) return;
  try {
    if (!async_error().empty()) {
      abort();
    } else {
      (void)nccl().comm_destroy(comm_);
      comm_ = nullptr;
    }
  } catch (...) {
    // nccl() was loaded before comm_ existed and cannot throw here; nothing else does.
  }
}

void NcclComm::post(Way way, int peer, std::span<const Piece> pieces, cudaStream_t stream, const Where& where) {
  const char* call = way == Way::Send ? "ncclSend" : "ncclRecv";
  if (!comm_) throw DeviceError(failure(call, "the communicator was aborted after an earlier failure", where));
  const NcclApi& api = nccl();
  // One piece is one launch already; a group fuses several into one, and NCCL then moves them
  // one after the other, in order, as the peer's group receives them.
  const bool group = pieces.size() > 1;
  if (group) check(api.group_start(), "ncclGroupStart", where);
  for (const Piece& p : pieces) {
    const ncclResult_t r = way == Way::Send ? api.send(p.data, p.bytes, ncclUint8, peer, comm_, stream)
                                            : api.recv(p.data, p.bytes, ncclUint8, peer, comm_, stream);
    if (r != ncclSuccess) {
      if (group) (void)api.group_end();  // a group left open would swallow every later call
      throw_failure(r, call, where);
    }
  }
  if (group) check(api.group_end(), "ncclGroupEnd", where);
}

std::string NcclComm::async_error() {
  if (!comm_) return {};
  const NcclApi& api = nccl();
  ncclResult_t async = ncclSuccess;
  const ncclResult_t r = api.comm_get_async_error(comm_, &async);
  if (r != ncclSuccess) return failure("ncclCommGetAsyncError", error_text(r), {});
  // ncclInProgress is a non-blocking communicator still initializing: not an error.
  if (async == ncclSuccess || async == ncclInProgress) return {};
  return "ncclCommGetAsyncError reported " + error_text(async);
}

void NcclComm::abort() noexcept {
  aborted_ = true;
  if (!comm_) return;
  try {
    (void)nccl().comm_abort(comm_);
  } catch (...) {
    // Loaded before comm_ existed: cannot throw.
  }
  comm_ = nullptr;
}

}  // namespace ppsched::run::cuda
