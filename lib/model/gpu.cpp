#include "model/gpu.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace ppsched {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Where each number comes from.
//
// Peaks, bandwidths and capacities: the vendors' datasheets, dense (the sparsity figure halved).
//   h100   NVIDIA H100 Tensor Core GPU datasheet, H100 SXM: BF16 1,979 TFLOPS with sparsity, 989
//          dense; 3.35 TB/s; 80 GB HBM3 (80 GiB); 132 SMs (the H100 whitepaper).
//   h200   NVIDIA H200 datasheet, SXM: the H100's compute; 4.8 TB/s; 141 GB HBM3e; 132 SMs.
//   a100   NVIDIA A100 datasheet, 80GB SXM: BF16 312 TFLOPS dense; 2,039 GB/s; 80 GiB; 108 SMs.
//   b200   NVIDIA HGX B200 (1,000 W): BF16 2.25 PFLOPS dense; 8 TB/s; 192 GB; 148 SMs.
//   mi300x AMD Instinct MI300X datasheet: BF16 1,307.4 TFLOPS dense; 5.3 TB/s; 192 GB; 304 CUs.
//
// The A100's GEMM efficiency (0.94 of peak at full waves, half of it at a reduction of 140), memory
// efficiency (0.58 of the datasheet bandwidth for eager elementwise kernels) and dropout rate (90
// billion numbers a second) are the four figures fitted on the Zero Bubble paper's per-pass A100
// profiles of its 1.5B and 14.6B GPT blocks, and on nothing else: bench/op_cost_fit.cpp redoes the
// fit, docs/bench.md shows it.
//
// The H100 and H200's GEMM efficiency is ppsched's own H200 measurement (docs/bench.md, GPU
// fidelity: 4096-square bf16 GEMMs over 4096 tokens at 808 TFLOP/s, 0.817 of peak, which at 4 full
// waves of 132 SMs, fill 0.970, and a reduction of 4096 is 0.87 at full waves). The half-efficiency
// reduction, the memory efficiency and the 3 us kernel floor are the A100's (assumed to carry
// over); the dropout rate scales with SMs x boost clock (132 x 1.98 GHz against 108 x 1.41).
// B200 and MI300X have no measurement here: their GEMM efficiency (0.80, 0.70: what published
// vendor GEMM benchmarks reach) and everything else are assumptions, to be replaced by a measured
// model file's times.
//
// Links, per GPU and direction: NVLink 4 on H100/H200 (18 links, 900 GB/s both ways: 450), NVLink 3
// on A100 (600 GB/s: 300), NVLink 5 on B200 (1.8 TB/s: 900), MI300X's Infinity Fabric (7 links of
// 64 GB/s: 448); between nodes one 400 Gb/s NIC per GPU (ConnectX-7, NDR: 50 GB/s), 200 Gb/s
// (HDR: 25 GB/s) on the A100's DGX generation. Datasheet figures: what NCCL reaches is lower.
constexpr double kHalfK = 140, kMemoryEff = 0.58, kKernelUs = 3;
constexpr double kA100Random = 90e9;
constexpr double kH100Random = kA100Random * (132 * 1.98) / (108 * 1.41);

constexpr std::array<GpuSpec, 5> kGpus{{
    {"h100", 989e12, 3.35e12, 80 * kGiB, 132, 128, 256, 0.87, kHalfK, kMemoryEff, kH100Random, kKernelUs, 450e9, 50e9},
    {"h200", 989e12, 4.8e12, 141e9, 132, 128, 256, 0.87, kHalfK, kMemoryEff, kH100Random, kKernelUs, 450e9, 50e9},
    {"a100", 312e12, 2.039e12, 80 * kGiB, 108, 128, 256, 0.94, kHalfK, kMemoryEff, kA100Random, kKernelUs, 300e9, 25e9},
    {"b200", 2.25e15, 8e12, 192e9, 148, 128, 256, 0.80, kHalfK, kMemoryEff, kH100Random * 148 / 132, kKernelUs, 900e9,
     50e9},
    {"mi300x", 1.3074e15, 5.3e12, 192e9, 304, 256, 256, 0.70, kHalfK, kMemoryEff, kH100Random * 2, kKernelUs, 448e9,
     50e9},
}};

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::span<const GpuSpec> gpus() { return kGpus; }

const GpuSpec* find_gpu(std::string_view name) {
  for (const auto& g : kGpus)
    if (same_name(g.name, name)) return &g;
  return nullptr;
}

}  // namespace ppsched
