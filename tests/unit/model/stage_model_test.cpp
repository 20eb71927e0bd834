#include "model/stage_model.hpp"

#include "support/catch.hpp"

using namespace ppsched;

namespace {

constexpr std::size_t kF = static_cast<std::size_t>(ActionKind::F);
constexpr std::size_t kI = static_cast<std::size_t>(ActionKind::I);
constexpr std::size_t kW = static_cast<std::size_t>(ActionKind::W);
constexpr std::size_t kB = static_cast<std::size_t>(ActionKind::B);

// 6 blocks with measured times (block b: F = b + 1, I = 2(b + 1), W = 3(b + 1)); embedding and head
// on the H100 roofline.
NetworkModel model() {
  NetworkModel m;
  m.name = "six";
  m.sequence_length = 1024;
  m.vocab = 32000;
  m.hidden = 1024;
  m.ffn_hidden = 4096;
  m.heads = 8;
  m.kv_heads = 2;
  m.layers.push_back({LayerType::Embedding, {}});
  for (int b = 0; b < 6; ++b)
    m.layers.push_back({LayerType::Block, LayerTimes{b + 1.0, 2 * (b + 1.0), 3 * (b + 1.0), 1}});
  m.layers.push_back({LayerType::Head, {}});
  return m;
}

}  // namespace

TEST_CASE("derive_stages sums its layers' times and bytes per stage") {
  const NetworkModel m = model();
  const GpuSpec* gpu = find_gpu("h100");
  const Partition p = explicit_partition(m, {2, 3, 1}, 3);
  const StageModel s = derive_stages(m, p, gpu, 2);
  REQUIRE(s.costs.per_stage.size() == 3);
  REQUIRE(s.spec.size() == 3);
  const LayerCost e = layer_cost(m, m.layers.front(), gpu, 2), h = layer_cost(m, m.layers.back(), gpu, 2);
  // Measured at microbatch 1, asked at 2: doubled. Stage 0: embedding + blocks 1, 2.
  CHECK(s.costs.per_stage[0][kF] == Approx(e.f_us + 2 * (1 + 2)));
  CHECK(s.costs.per_stage[0][kI] == Approx(e.i_us + 2 * (2 + 4)));
  CHECK(s.costs.per_stage[0][kW] == Approx(e.w_us + 2 * (3 + 6)));
  CHECK(s.costs.per_stage[1][kF] == Approx(2 * (3 + 4 + 5)));
  CHECK(s.costs.per_stage[2][kF] == Approx(2 * 6 + h.f_us));
  CHECK(s.costs.per_stage[2][kW] == Approx(2 * 18 + h.w_us));
  for (const auto& k : s.costs.per_stage) {
    CHECK(k[kB] == Approx(k[kI] + k[kW]));
    CHECK(k[static_cast<std::size_t>(ActionKind::SendF)] == 0);
  }
  const LayerCost b = layer_cost(m, m.layers[1], gpu, 2);
  const double hidden_bytes = 2.0 * 1024 * 1024 * 2;  // tokens x hidden x bf16
  CHECK(s.spec[0].activation_bytes == hidden_bytes);
  CHECK(s.spec[0].gradient_bytes == 0);
  CHECK(s.spec[1].activation_bytes == hidden_bytes);
  CHECK(s.spec[1].gradient_bytes == hidden_bytes);
  CHECK(s.spec[2].activation_bytes == 0);  // the head ends the pipeline
  CHECK(s.spec[2].gradient_bytes == hidden_bytes);
  CHECK(s.spec[0].activation_memory_bytes == Approx(e.activation_bytes + 2 * b.activation_bytes));
  CHECK(s.spec[1].activation_memory_bytes == Approx(3 * b.activation_bytes));
  CHECK(s.spec[2].weight_grad_memory_bytes == Approx(b.weight_grad_bytes + h.weight_grad_bytes));
  CHECK(s.spec[0].weight_bytes == Approx(e.static_bytes + 2 * b.static_bytes));
  CHECK(s.spec[2].weight_bytes == Approx(b.static_bytes + h.static_bytes));
  CHECK(s.costs.overlap_factor == 1.0);
}

TEST_CASE("derive_stages: an empty stage passes on what it receives and holds nothing") {
  const NetworkModel m = model();
  const StageModel s = derive_stages(m, parse_pipeline_layout("E|t*6||L", m, 4), find_gpu("h100"), 1);
  const double hidden_bytes = 1024.0 * 1024 * 2;
  REQUIRE(s.spec.size() == 4);
  CHECK(s.spec[0].activation_bytes == hidden_bytes);  // the embedding alone
  CHECK(s.spec[2].activation_bytes == hidden_bytes);
  CHECK(s.spec[2].gradient_bytes == hidden_bytes);
  CHECK(s.spec[2].activation_memory_bytes == 0);
  CHECK(s.spec[2].weight_grad_memory_bytes == 0);  // stated, not StageSpec's "same as M_B"
  CHECK(s.spec[2].weight_bytes == 0);
  CHECK(s.costs.per_stage[2][kF] == 0);
  CHECK(s.spec[3].gradient_bytes == hidden_bytes);
}

TEST_CASE("derive_stages refuses a partition that is not the model in order") {
  const NetworkModel m = model();
  Partition p = explicit_partition(m, {3, 3}, 2);
  std::swap(p.layers_of_stage[0][1], p.layers_of_stage[0][2]);
  CHECK_THROWS_WITH(derive_stages(m, p, nullptr, 1),
                    "stage 0 holds layer 2 where layer 1 comes next: stages must hold every layer once, in order");
  Partition short_one = explicit_partition(m, {3, 3}, 2);
  short_one.layers_of_stage[1].pop_back();
  CHECK_THROWS_WITH(derive_stages(m, short_one, find_gpu("h100"), 1), "the stages hold 7 of the model's 8 layers");
  CHECK_THROWS_WITH(derive_stages(m, explicit_partition(m, {3, 3}, 2), nullptr, 1),
                    "layer 0 (embedding) has no measured times; give --gpu NAME for the roofline");
}
