// The CUDA backend's own kernels, behind plain host functions so that only kernels.cu goes
// through nvcc (at C++17) and the rest of the backend is ordinary C++20 built by the host compiler.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace ppsched::run::cuda {

/// Fills `count` elements of `element_bytes` (2: bf16, 4: fp32) at `data` with small
/// deterministic values (|x| <= scale), on `stream`. Returns the launch's error.
cudaError_t fill_small(void* data, std::uint64_t count, std::uint32_t element_bytes, float scale, cudaStream_t stream);

/// Enqueues one thread on `stream` that busy-waits `nanoseconds` of the GPU's global timer: the
/// synthetic workload's stand-in for a launch of known duration. Returns the launch's error.
cudaError_t spin(std::uint64_t nanoseconds, cudaStream_t stream);

}  // namespace ppsched::run::cuda
