#include "model/gpu.hpp"

#include "support/catch.hpp"

using namespace ppsched;

TEST_CASE("find_gpu knows the five accelerators, by any case, and nothing else") {
  for (const char* name : {"h100", "h200", "a100", "b200", "mi300x"}) CHECK(find_gpu(name) != nullptr);
  CHECK(gpus().size() == 5);
  REQUIRE(find_gpu("H100") != nullptr);
  CHECK(find_gpu("H100")->name == "h100");
  CHECK(find_gpu("Mi300X") == find_gpu("mi300x"));
  CHECK(find_gpu("h10") == nullptr);
  CHECK(find_gpu("") == nullptr);
}

TEST_CASE("the table holds the datasheets' dense bf16 peaks, bandwidths and capacities") {
  const GpuSpec& h100 = *find_gpu("h100");
  CHECK(h100.peak_flops == 989e12);
  CHECK(h100.hbm_bytes_per_s == 3.35e12);
  CHECK(h100.memory_bytes == 80.0 * 1024 * 1024 * 1024);
  CHECK(find_gpu("h200")->peak_flops == 989e12);
  CHECK(find_gpu("h200")->hbm_bytes_per_s == 4.8e12);
  CHECK(find_gpu("h200")->memory_bytes == 141e9);
  CHECK(find_gpu("a100")->peak_flops == 312e12);
  CHECK(find_gpu("a100")->hbm_bytes_per_s == 2.039e12);
  CHECK(find_gpu("b200")->peak_flops == 2.25e15);
  CHECK(find_gpu("b200")->hbm_bytes_per_s == 8e12);
  CHECK(find_gpu("b200")->memory_bytes == 192e9);
  CHECK(find_gpu("mi300x")->peak_flops == 1.3074e15);
  CHECK(find_gpu("mi300x")->hbm_bytes_per_s == 5.3e12);
}

TEST_CASE("the table holds each GPU's multiprocessors and a GEMM efficiency below 1") {
  CHECK(find_gpu("a100")->sms == 108);
  CHECK(find_gpu("h100")->sms == 132);
  CHECK(find_gpu("b200")->sms == 148);
  for (const GpuSpec& g : gpus()) {
    INFO(g.name);
    CHECK((g.gemm_max_efficiency > 0 && g.gemm_max_efficiency < 1));
    CHECK((g.memory_efficiency > 0 && g.memory_efficiency <= 1));
    CHECK(g.random_per_s > 0);
    CHECK((g.tile_m > 0 && g.tile_n > 0));
  }
}
