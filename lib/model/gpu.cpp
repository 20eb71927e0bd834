#include "model/gpu.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace ppsched {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The efficiency curve and the overhead are the same assumption for every device: a large bf16
// GEMM-heavy pass reaches about 75% of the dense peak, half of that at 256 tokens, and a layer
// launches a few tens of kernels per pass (about 20 us). Measured times replace all of it.
constexpr double kMaxEfficiency = 0.75;
constexpr double kHalfEfficiencyTokens = 256;
constexpr double kLayerOverheadUs = 20;

// Sources (vendor datasheets; dense figures, i.e. the sparsity figure halved):
//   h100   NVIDIA H100 Tensor Core GPU datasheet, H100 SXM: BF16 1,979 TFLOPS with sparsity, so
//          989 TFLOPS dense; 3.35 TB/s; 80 GB HBM3 (80 GiB of DRAM).
//   h200   NVIDIA H200 Tensor Core GPU datasheet, H200 SXM: BF16 1,979 TFLOPS with sparsity
//          (989 dense, the H100's compute); 4.8 TB/s; 141 GB HBM3e.
//   a100   NVIDIA A100 Tensor Core GPU datasheet, A100 80GB SXM: BF16 312 TFLOPS dense (624 with
//          sparsity); 2,039 GB/s; 80 GB HBM2e (80 GiB).
//   b200   NVIDIA HGX B200 (1,000 W per GPU): BF16 4.5 PFLOPS with sparsity, 2.25 dense; 8 TB/s;
//          192 GB HBM3e (NVIDIA's "Blackwell" datasheet; the GB200 part at 1,200 W is faster).
//   mi300x AMD Instinct MI300X datasheet: BF16 1,307.4 TFLOPS dense; 5.3 TB/s; 192 GB HBM3.
constexpr std::array<GpuSpec, 5> kGpus{{
    {"h100", 989e12, 3.35e12, 80 * kGiB, kMaxEfficiency, kHalfEfficiencyTokens, kLayerOverheadUs},
    {"h200", 989e12, 4.8e12, 141e9, kMaxEfficiency, kHalfEfficiencyTokens, kLayerOverheadUs},
    {"a100", 312e12, 2.039e12, 80 * kGiB, kMaxEfficiency, kHalfEfficiencyTokens, kLayerOverheadUs},
    {"b200", 2.25e15, 8e12, 192e9, kMaxEfficiency, kHalfEfficiencyTokens, kLayerOverheadUs},
    {"mi300x", 1.3074e15, 5.3e12, 192e9, kMaxEfficiency, kHalfEfficiencyTokens, kLayerOverheadUs},
}};

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

double GpuSpec::efficiency(double tokens) const {
  if (!(tokens > 0)) return 0.0;
  return max_efficiency * tokens / (tokens + half_efficiency_tokens);
}

std::span<const GpuSpec> gpus() { return kGpus; }

const GpuSpec* find_gpu(std::string_view name) {
  for (const auto& g : kGpus)
    if (same_name(g.name, name)) return &g;
  return nullptr;
}

}  // namespace ppsched
