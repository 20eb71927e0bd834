// Turning CUDA and cuBLAS status codes into DeviceError. Every message names the call and the
// error, then where it happened, e.g.
//   cudaMallocFromPoolAsync failed (cudaErrorMemoryAllocation: out of memory) in 2F5 on rank 2
#pragma once

#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace ppsched::run::cuda {

/// Where a call ran, for its error message; nothing is formatted unless the call failed.
struct Where {
  static constexpr std::uint32_t kNone = 0xFFFFFFFF;
  std::string_view what;       ///< the action's label ("2F5"), or the step ("setup")
  std::uint32_t rank = kNone;  ///< the rank it ran for, if any
  int device = -1;             ///< else the CUDA device ordinal, if any
};

/// "cudaErrorMemoryAllocation: out of memory"
std::string error_text(cudaError_t e);
std::string error_text(cublasStatus_t s);

/// "<call> failed (<error>)<where>", the text of every DeviceError this backend throws.
std::string failure(std::string_view call, const std::string& error, const Where& where);

[[noreturn]] void throw_failure(cudaError_t e, std::string_view call, const Where& where);
[[noreturn]] void throw_failure(cublasStatus_t s, std::string_view call, const Where& where);

inline void check(cudaError_t e, std::string_view call, const Where& where = {}) {
  if (e != cudaSuccess) [[unlikely]]
    throw_failure(e, call, where);
}

inline void check(cublasStatus_t s, std::string_view call, const Where& where = {}) {
  if (s != CUBLAS_STATUS_SUCCESS) [[unlikely]]
    throw_failure(s, call, where);
}

}  // namespace ppsched::run::cuda
