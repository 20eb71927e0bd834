// NCCL's entry points, loaded with dlopen() the first time a multi-process run needs them.
//
// The backend never links libnccl: a single-process run must work on a machine without NCCL,
// and NCCL is a 200 MB library that only multi-process runs use. nccl.h is included for its
// types and declarations only; every call goes through the pointers of NcclApi.
//
// Only nccl_comm.cpp uses this file, and only where CMake found nccl.h (else nccl_missing.cpp).
#pragma once

#include <nccl.h>

#include <string>
#include <string_view>

#include "cuda_check.hpp"

namespace ppsched::run::cuda {

/// The NCCL functions the backend calls, resolved from libnccl.so.2.
struct NcclApi {
  decltype(&::ncclGetVersion) get_version = nullptr;
  decltype(&::ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&::ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&::ncclCommDestroy) comm_destroy = nullptr;
  decltype(&::ncclCommAbort) comm_abort = nullptr;
  decltype(&::ncclCommGetAsyncError) comm_get_async_error = nullptr;
  decltype(&::ncclSend) send = nullptr;
  decltype(&::ncclRecv) recv = nullptr;
  decltype(&::ncclGroupStart) group_start = nullptr;
  decltype(&::ncclGroupEnd) group_end = nullptr;
  decltype(&::ncclGetErrorString) get_error_string = nullptr;
  std::string version;  ///< the loaded library's, "2.28.3"
};

/// Loads NCCL on first use and returns its entry points (the library stays loaded). Throws
/// DeviceError saying why it could not be loaded; a later call tries again.
const NcclApi& nccl();

/// "ncclRemoteError: remote process exited or there was a network error"
std::string error_text(ncclResult_t r);

[[noreturn]] void throw_failure(ncclResult_t r, std::string_view call, const Where& where);

inline void check(ncclResult_t r, std::string_view call, const Where& where = {}) {
  if (r != ncclSuccess) [[unlikely]]
    throw_failure(r, call, where);
}

}  // namespace ppsched::run::cuda
