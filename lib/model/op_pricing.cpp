#include "model/op_pricing.hpp"

#include <algorithm>
#include <cmath>

namespace ppsched {

namespace {

double memory_s(const GpuSpec& gpu, double bytes) { return bytes / (gpu.hbm_bytes_per_s * gpu.memory_efficiency); }

// A kernel bound by its bytes or its random numbers, whichever takes longer.
double kernel_us(const GpuSpec& gpu, double bytes, double random) {
  const double s = std::max(memory_s(gpu, bytes), random > 0 ? random / gpu.random_per_s : 0.0);
  return std::max(s * 1e6, gpu.kernel_us);
}

}  // namespace

double gemm_efficiency(const GpuSpec& gpu, const Gemm& g) {
  // Output tiles of all `count` GEMMs share the machine (a batched GEMM is one kernel); the last
  // wave runs only partly full.
  const double tiles = std::ceil(g.m / gpu.tile_m) * std::ceil(g.n / gpu.tile_n) * g.count;
  const double waves = std::ceil(tiles / gpu.sms);
  const double fill = tiles / (waves * gpu.sms);
  return gpu.gemm_max_efficiency * fill * g.k / (g.k + gpu.gemm_half_k);
}

double gemm_us(const GpuSpec& gpu, const Gemm& g, double dtype_bytes) {
  if (!(g.m > 0 && g.n > 0 && g.k > 0 && g.count > 0)) return 0.0;
  const double compute_s = g.flops() / (gpu.peak_flops * gemm_efficiency(gpu, g));
  const double bytes = (g.m * g.k + g.k * g.n + g.m * g.n) * dtype_bytes * g.count;
  return std::max(std::max(compute_s, memory_s(gpu, bytes)) * 1e6, gpu.kernel_us);
}

PassTime price_pass(const GpuSpec& gpu, const PassOps& pass, double dtype_bytes) {
  PassTime t;
  for (const Gemm& g : pass.gemms) t.gemm_us += gemm_us(gpu, g, dtype_bytes);
  const FusedAttention& a = pass.attention;
  if (a.flops > 0) {
    // Its products run over the head dimension, as a GEMM of that reduction length with full
    // waves; its dropout's numbers are drawn inside it.
    const double eff = gpu.gemm_max_efficiency * a.head_dim / (a.head_dim + gpu.gemm_half_k);
    const double s = std::max({a.flops / (gpu.peak_flops * eff), memory_s(gpu, a.bytes), a.random / gpu.random_per_s});
    t.attention_us = std::max(s * 1e6, gpu.kernel_us);
  }
  for (const MemoryOp& op : pass.memory) t.memory_us += kernel_us(gpu, op.bytes, op.random);
  return t;
}

}  // namespace ppsched
