// The accelerator table: every constant the op-level cost model (model/op_pricing.hpp) needs about
// a device, in one place, each with where it comes from (gpu.cpp, docs/formats.md section 10).
//
// Peak figures are the vendors' datasheet numbers (dense, no sparsity). The GEMM efficiency, the
// memory efficiency and the random-number rate are fitted once on the Zero Bubble paper's A100
// profiles (docs/bench.md, "The op-level cost model") or measured by ppsched's own GPU bench; a
// model file's measured times override all of them.
#pragma once

#include <span>
#include <string_view>

namespace ppsched {

/// One accelerator. A GEMM C[m x n] += A[m x k] B[k x n] runs in waves of tile_m x tile_n output
/// tiles over `sms` multiprocessors and reaches
///   gemm_max_efficiency x wave_fill x k / (k + gemm_half_k)
/// of peak_flops (a short reduction dimension keeps the tensor cores waiting on loads), or moves
/// its operands at memory_efficiency x hbm_bytes_per_s, whichever is slower. A memory-bound kernel
/// moves its bytes at that rate; a dropout draws random_per_s numbers a second; every kernel costs
/// at least kernel_us.
struct GpuSpec {
  std::string_view name;       ///< lower case, as --gpu takes it ("h100")
  double peak_flops;           ///< dense bf16 FLOP/s
  double hbm_bytes_per_s;      ///< HBM bandwidth, bytes per second
  double memory_bytes;         ///< HBM capacity, bytes
  unsigned sms;                ///< streaming multiprocessors (compute units)
  unsigned tile_m, tile_n;     ///< the output tile of the large GEMM kernels
  double gemm_max_efficiency;  ///< fraction of peak a large, full-wave GEMM reaches
  double gemm_half_k;          ///< reduction length at which a GEMM reaches half of it
  double memory_efficiency;    ///< fraction of hbm_bytes_per_s an eager elementwise kernel reaches
  double random_per_s;         ///< random numbers a dropout kernel draws per second
  double kernel_us;            ///< the least time one kernel takes (launch and tail)
  /// The links a GPU's collectives run over (model/collectives.hpp): inside a node (NVLink,
  /// Infinity Fabric), bytes per second each way per GPU, and between nodes (the GPU's own NIC).
  double scale_up_bytes_per_s;
  double scale_out_bytes_per_s;
};

/// Every known accelerator, in a fixed order.
std::span<const GpuSpec> gpus();

/// The accelerator named `name` (case-insensitive), or nullptr.
const GpuSpec* find_gpu(std::string_view name);

}  // namespace ppsched
