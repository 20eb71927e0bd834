// The op pricing (lib/model/op_pricing.cpp) on shapes worked by hand.
#include "model/op_pricing.hpp"

#include "support/catch.hpp"

using namespace ppsched;

TEST_CASE("gemm efficiency: tile waves over the SMs and the reduction length") {
  const GpuSpec& a100 = *find_gpu("a100");
  // 6144 x 6912 (the 1.5B QKV of a microbatch): 48 x 27 = 1296 tiles of 128 x 256, 12 full waves
  // of 108 SMs; k = 2304.
  const Gemm full{"qkv", 6144, 6912, 2304};
  CHECK(gemm_efficiency(a100, full) == Approx(a100.gemm_max_efficiency * 2304 / (2304 + a100.gemm_half_k)));
  // 1024 x 5120: 8 x 20 = 160 tiles, 2 waves of which the second holds 52: fill 160 / 216.
  const Gemm partial{"out", 1024, 5120, 5120};
  CHECK(gemm_efficiency(a100, partial) ==
        Approx(a100.gemm_max_efficiency * (160.0 / 216) * 5120 / (5120 + a100.gemm_half_k)));
  // A batched GEMM shares its waves: 144 problems of 8 x 4 tiles = 4608 tiles, 43 waves (42.67).
  const Gemm scores{"scores", 1024, 1024, 96, 144};
  CHECK(gemm_efficiency(a100, scores) ==
        Approx(a100.gemm_max_efficiency * (4608.0 / (43 * 108)) * 96 / (96 + a100.gemm_half_k)));
}

TEST_CASE("gemm time: compute-bound at a long reduction, memory-bound at a short one") {
  const GpuSpec& a100 = *find_gpu("a100");
  const Gemm big{"mlp_in", 6144, 9216, 2304};
  CHECK(gemm_us(a100, big, 2) == Approx(big.flops() / (a100.peak_flops * gemm_efficiency(a100, big)) * 1e6));
  // Outer product-like: 8192 x 8192 x 8 moves 128 MiB for 1 GFLOP.
  const Gemm thin{"thin", 8192, 8192, 8};
  const double bytes = (8192.0 * 8 * 2 + 8192.0 * 8192) * 2;
  CHECK(gemm_us(a100, thin, 2) == Approx(bytes / (a100.hbm_bytes_per_s * a100.memory_efficiency) * 1e6));
  // Tiny: the kernel floor.
  CHECK(gemm_us(a100, Gemm{"tiny", 16, 16, 16}, 2) == a100.kernel_us);
}

TEST_CASE("pass time: kernels add up, and a dropout is bound by its random numbers") {
  const GpuSpec& a100 = *find_gpu("a100");
  PassOps pass;
  pass.memory.push_back({"norm", 1e9});
  pass.memory.push_back({"dropout", 1e6, 1e9});
  const PassTime t = price_pass(a100, pass, 2);
  const double norm_us = 1e9 / (a100.hbm_bytes_per_s * a100.memory_efficiency) * 1e6;
  CHECK(t.memory_us == Approx(norm_us + 1e9 / a100.random_per_s * 1e6));
  CHECK(t.gemm_us == 0);
  CHECK(t.attention_us == 0);
  CHECK(t.total_us() == Approx(t.memory_us));
}
