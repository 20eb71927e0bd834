#include "kernels.hpp"

#include <cuda_bf16.h>

namespace ppsched::run::cuda {

namespace {

// A hash of the index, so values look random without cuRAND and repeat from run to run.
__device__ float small_value(std::uint64_t i, float scale) {
  std::uint32_t x = static_cast<std::uint32_t>(i ^ (i >> 32)) * 0x9E3779B1u;
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  return (static_cast<float>(x & 0xFFFFu) / 32768.0f - 1.0f) * scale;
}

__device__ void store(float* p, float v) { *p = v; }
__device__ void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }

template <typename T>
__global__ void fill_kernel(T* data, std::uint64_t count, float scale) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    store(data + i, small_value(i, scale));
}

__device__ std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(std::uint64_t nanoseconds) {
  const std::uint64_t start = global_timer_ns();
  while (global_timer_ns() - start < nanoseconds) {
  }
}

}  // namespace

cudaError_t fill_small(void* data, std::uint64_t count, std::uint32_t element_bytes, float scale, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  constexpr unsigned kThreads = 256;
  // Grid-stride: a few blocks per SM's worth is plenty for a one-off fill of any size.
  const std::uint64_t wanted = (count + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(wanted < 4096 ? wanted : 4096);
  if (element_bytes == 2)
    fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(data), count, scale);
  else
    fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<float*>(data), count, scale);
  return cudaGetLastError();
}

cudaError_t spin(std::uint64_t nanoseconds, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(nanoseconds);
  return cudaGetLastError();
}

}  // namespace ppsched::run::cuda
