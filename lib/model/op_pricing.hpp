// What a layer's operations (model/ops.hpp) take on one accelerator (model/gpu.hpp): each GEMM at
// the efficiency its shape reaches, the fused attention core at the efficiency of its head-sized
// inner products, each memory-bound kernel at the bandwidth eager kernels reach, every kernel at
// least the GPU's kernel time. Kernels of a pass run one after another; nothing overlaps.
#pragma once

#include "model/gpu.hpp"
#include "model/ops.hpp"

namespace ppsched {

/// A pass's time in microseconds, by the kind of work.
struct PassTime {
  double gemm_us = 0, attention_us = 0, memory_us = 0;
  double total_us() const { return gemm_us + attention_us + memory_us; }
};

/// The fraction of peak a GEMM of this shape reaches (tile waves and the reduction length).
double gemm_efficiency(const GpuSpec& gpu, const Gemm& g);

/// One GEMM (all `count` of them), `dtype_bytes` per element of its operands.
double gemm_us(const GpuSpec& gpu, const Gemm& g, double dtype_bytes);

PassTime price_pass(const GpuSpec& gpu, const PassOps& pass, double dtype_bytes);

}  // namespace ppsched
