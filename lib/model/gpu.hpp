// The accelerator table: what the roofline of model/network.hpp needs to know about a device.
//
// Peak figures are the vendors' datasheet numbers (dense, no sparsity); the efficiency curve and
// the per-layer overhead are assumptions, not measurements: a model file's measured times override
// all of them (docs/formats.md, section 10).
#pragma once

#include <span>
#include <string_view>

namespace ppsched {

/// One accelerator. A GEMM-heavy pass over `tokens` tokens reaches
/// max_efficiency * tokens / (tokens + half_efficiency_tokens) of peak_flops; a memory-bound one
/// moves hbm_bytes_per_s; every layer pays layer_overhead_us per pass (kernel launches).
struct GpuSpec {
  std::string_view name;          ///< lower case, as --gpu takes it ("h100")
  double peak_flops;              ///< dense bf16 FLOP/s
  double hbm_bytes_per_s;         ///< HBM bandwidth, bytes per second
  double memory_bytes;            ///< HBM capacity, bytes
  double max_efficiency;          ///< fraction of peak_flops a large GEMM-heavy pass reaches
  double half_efficiency_tokens;  ///< tokens at which a pass reaches half of max_efficiency
  double layer_overhead_us;       ///< fixed cost of one layer's pass, microseconds

  /// Fraction of peak_flops reached over `tokens` tokens.
  double efficiency(double tokens) const;
};

/// Every known accelerator, in a fixed order.
std::span<const GpuSpec> gpus();

/// The accelerator named `name` (case-insensitive), or nullptr.
const GpuSpec* find_gpu(std::string_view name);

}  // namespace ppsched
