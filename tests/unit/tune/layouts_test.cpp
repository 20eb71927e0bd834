// The layout search of `tune --gpus` (tune/layouts.hpp): which layouts it enumerates, and that each
// priced layout's figures add up (its iteration, throughput, MFU and peak from their parts).
#include "tune/layouts.hpp"

#include <cmath>
#include <set>

#include "ir/user_error.hpp"
#include "support/catch.hpp"
#include "support/model_shapes.hpp"

using namespace ppsched;

namespace {

LayoutRequest request(std::uint32_t gpus, std::uint32_t global_batch) {
  LayoutRequest r;
  r.gpus = gpus;
  r.global_batch = global_batch;
  return r;
}

}  // namespace

TEST_CASE("layouts: every split of the GPUs the model and the batch allow, each sharding once") {
  const NetworkModel m = test::llama3_8b();  // 32 heads, 8 KV heads, 32 blocks
  const std::vector<ParallelLayout> layouts = enumerate_layouts(request(64, 256), m);
  std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, int>> seen;
  for (const ParallelLayout& l : layouts) {
    INFO(layout_label(l));
    CHECK(l.pp * l.tp * l.dp == 64);
    CHECK(l.tp <= 8);
    CHECK((l.tp & (l.tp - 1)) == 0);
    CHECK(l.pp <= 34);
    CHECK(256 % l.dp == 0);
    CHECK(l.ep == 1);  // a dense model
    CHECK(l.sequence_parallel == (l.tp > 1));
    if (l.dp == 1) CHECK(l.sharding == DataSharding::None);
    CHECK(seen.insert({l.pp, l.tp, l.dp, int(l.sharding)}).second);
  }
  // tp 1, 2, 4, 8 with pp every divisor of 64 / tp up to 34 (pp 64 is not one): 6 + 6 + 5 + 4
  // shapes; 3 shardings each, but 1 where dp = 1 (tp 2, 4, 8 with pp 32, 16, 8).
  CHECK(layouts.size() == 3 * (6 + 6 + 5 + 4) - 2 * 3);
}

TEST_CASE("layouts: experts spread over groups that divide both the experts and data x tensor") {
  NetworkModel m = test::llama3_8b();
  m.moe = {8, 2, 14336, 0};
  for (std::size_t i = 1; i + 1 < m.layers.size(); ++i) m.layers[i].type = LayerType::MoeBlock;
  for (const ParallelLayout& l : enumerate_layouts(request(16, 64), m)) {
    INFO(layout_label(l));
    CHECK(8 % l.ep == 0);
    CHECK((l.dp * l.tp) % l.ep == 0);
  }
}

TEST_CASE("layouts: a request no split serves is a UserError naming the rules") {
  NetworkModel m = test::llama3_8b();
  m.layers.erase(m.layers.begin() + 3, m.layers.end() - 1);  // 2 blocks: at most 4 stages
  CHECK_THROWS_AS(tune_layouts(request(64, 1), m, *find_gpu("h100")), UserError);
  CHECK_THROWS_WITH(tune_layouts(request(64, 0), m, *find_gpu("h100")), Catch::Contains("--global-batch"));
}

TEST_CASE("layouts: Llama 3 8B on 8 H100s, each layout's figures from their parts") {
  const NetworkModel m = test::llama3_8b();
  const GpuSpec& h100 = *find_gpu("h100");
  const LayoutResult result = tune_layouts(request(8, 64), m, h100);
  REQUIRE(result.found());
  CHECK(result.memory_cap == Approx(0.9 * 80.0 * 1024 * 1024 * 1024));
  const double tokens = 64.0 * 8192;
  for (const LayoutTrial& t : result.trials) {
    if (!t.ran) continue;
    INFO(layout_label(t.layout) << " " << t.schedule.family);
    CHECK(t.iteration_us == Approx(t.pipeline_us + t.data_parallel_us + t.optimizer_us));
    CHECK(t.tokens_per_s_per_gpu == Approx(tokens / (t.iteration_us * 1e-6) / 8));
    CHECK(t.peak_bytes == Approx(t.state_bytes + t.schedule.peak));
    CHECK(t.fits == (t.peak_bytes <= result.memory_cap));
    CHECK(t.mfu > 0.05);
    CHECK(t.mfu < h100.gemm_max_efficiency);
    CHECK(t.schedule.microbatches * t.schedule.microbatch_size * t.layout.dp == 64);
  }
  // Best first among those that fit; the state shrinks as more of it is sharded.
  for (std::size_t i = 1; i < result.trials.size(); ++i)
    if (result.trials[i].fits) CHECK(result.trials[i].iteration_us >= result.trials.front().iteration_us);
  auto state_of = [&](std::uint32_t pp, DataSharding s) {
    for (const LayoutTrial& t : result.trials)
      if (t.ran && t.layout.pp == pp && t.layout.tp == 1 && t.layout.sharding == s) return t.state_bytes;
    return -1.0;
  };
  CHECK(state_of(2, DataSharding::Full) < state_of(2, DataSharding::Optimizer));
  CHECK(state_of(2, DataSharding::Optimizer) < state_of(2, DataSharding::None));
  // The best's verdict says so; the others say by how much they are slower, or why they do not fit.
  CHECK(layout_verdict(result.trials.front(), result.trials.front(), result.memory_cap) == "best");
  for (const LayoutTrial& t : result.trials)
    if (t.ran && !t.fits)
      CHECK(layout_verdict(t, result.trials.front(), result.memory_cap).rfind("over the cap", 0) == 0);
}

TEST_CASE("layouts: a cap below every layout's state leaves nothing that fits") {
  LayoutRequest r = request(8, 64);
  r.memory_cap = 1e9;  // 1 GB: less than any share of 8B parameters' state
  const LayoutResult result = tune_layouts(r, test::llama3_8b(), *find_gpu("h100"));
  CHECK_FALSE(result.found());
  for (const LayoutTrial& t : result.trials) CHECK_FALSE(t.fits);
}
