#include "model/network.hpp"

#include <string>

#include "support/catch.hpp"
#include "support/model_shapes.hpp"

using namespace ppsched;
using ppsched::test::llama3_8b;

namespace {

const GpuSpec& h100() { return *find_gpu("h100"); }

}  // namespace

TEST_CASE("op costs: one Llama 3 8B block's W on an H100 at microbatch 1, by hand") {
  // W is the four weight-gradient GEMMs dW = X^T dY, (k, n, T) with T = 8192 tokens, and the two
  // RMSNorms' scale gradients. On the H100 (132 SMs, 128 x 256 tiles, 0.87 of 989 TFLOP/s at full
  // waves, half at a reduction of 140), each GEMM's tiles are 128 x 256 output blocks:
  //   wq|wk|wv 4096 x 6144: 32 x 24 =  768 tiles, 6 waves of 132, fill 768 / 792   = 0.9697
  //   wo       4096 x 4096: 32 x 16 =  512 tiles, 4 waves,        fill 512 / 528   = 0.9697
  //   w1|w3    4096 x 28672: 32 x 112 = 3584 tiles, 28 waves,     fill 3584 / 3696 = 0.9697
  //   w2       14336 x 4096: 112 x 16 = 1792 tiles, 14 waves,     fill 0.9697
  // efficiency 0.87 x 0.9697 x 8192 / 8332 = 0.8295; FLOPs 2 x 4096 x 6144 x 8192 = 412.3 G and so
  // on: 502.62 + 335.08 + 2345.55 + 1172.78 = 4356.03 us (every GEMM compute-bound: the largest
  // operand traffic, w1|w3's, takes 397 us). The norms' gradients read x and dy, 2 x 8192 x 4096 x
  // 2 bytes each, at 0.58 x 3.35 TB/s: 69.08 us each. W = 4494.19 us.
  const NetworkModel m = llama3_8b();
  const LayerCost c = layer_cost(m, m.layers[1], &h100(), 1);
  CHECK(c.w_us == Approx(4494.185756).epsilon(1e-6));
  // F and I hold the same GEMM FLOPs (I a little more time: its k of 14336 and 28672 differ) plus
  // the attention core and the elementwise work, so each takes longer than W.
  CHECK(c.f_us > c.w_us);
  CHECK(c.i_us > c.f_us);
  CHECK(c.params == 218103808.0 + 2 * 4096);  // two RMSNorms
  CHECK(c.static_bytes == c.params * (2 + 4 + 12));
  CHECK(c.output_bytes == 8192.0 * 4096 * 2);
}

TEST_CASE("roofline: efficiency rises with the microbatch size, so time per sample falls") {
  NetworkModel m = llama3_8b();
  m.sequence_length = 128;  // short sequences, where the curve matters
  std::uint32_t previous_mbs = 1;
  double previous = layer_cost(m, m.layers[1], &h100(), 1).f_us;
  for (std::uint32_t mbs : {2u, 4u, 16u}) {
    const double f = layer_cost(m, m.layers[1], &h100(), mbs).f_us;
    CHECK(f > previous);
    CHECK(f / mbs < previous / previous_mbs);
    previous = f;
    previous_mbs = mbs;
  }
}

TEST_CASE("measured times override the roofline, scaled linearly from their microbatch size") {
  NetworkModel m = llama3_8b();
  m.layers[1].measured = LayerTimes{1200, 1250, 1100, 2};
  const LayerCost c = layer_cost(m, m.layers[1], &h100(), 4);
  CHECK(c.f_us == 2400);
  CHECK(c.i_us == 2500);
  CHECK(c.w_us == 2200);
  const LayerCost without_gpu = layer_cost(m, m.layers[1], nullptr, 1);
  CHECK(without_gpu.f_us == 600);
  // Memory still comes from the shape.
  CHECK(without_gpu.activation_bytes == layer_cost(m, m.layers[2], &h100(), 1).activation_bytes);
}

TEST_CASE("a layer without measured times needs a GPU, a microbatch needs a sample") {
  const NetworkModel m = llama3_8b();
  try {
    layer_cost(m, m.layers[3], nullptr, 1);
    FAIL("no error");
  } catch (const ModelError& e) {
    CHECK(std::string(e.what()) == "layer 3 (block) has no measured times; give --gpu NAME for the roofline");
  }
  CHECK_THROWS_AS(layer_cost(m, m.layers[1], &h100(), 0), ModelError);
}

TEST_CASE("activation memory per recompute policy, and M_W the linear layers' inputs") {
  NetworkModel m = llama3_8b();
  const double tokens = 8192, d = 2, h = 4096, kv = 1024, f = 14336;
  // None: attention 4h + 2kv elements + 32 fp32 log-sum-exps; FFN 2h + 4f = 168,064 bytes per token.
  const LayerCost none = layer_cost(m, m.layers[1], &h100(), 1);
  CHECK(none.activation_bytes == tokens * (d * (6 * h + 2 * kv + 4 * f) + 4 * 32));
  CHECK(none.activation_bytes == tokens * 168064);
  CHECK(none.weight_grad_bytes == tokens * d * (3 * h + f));
  m.recompute = Recompute::Mode::Selective;  // drops the attention output, the LSE, silu(gate) and the down input
  const LayerCost selective = layer_cost(m, m.layers[1], &h100(), 1);
  CHECK(selective.activation_bytes == tokens * (168064 - d * h - 4 * 32 - d * 2 * f));
  CHECK(selective.weight_grad_bytes == none.weight_grad_bytes);
  // The attention core re-runs: priced apart, for with_recompute to charge where PyTorch runs it.
  // Flash attention, 2 T s h = 549.76 GFLOP at 0.87 x 128 / (128 + 140) of 989 TFLOP/s: 1337.76 us.
  CHECK(selective.recompute_us == Approx(2 * tokens * 8192 * h / (989e12 * 0.87 * 128 / 268) * 1e6));
  CHECK(selective.recompute_us == Approx(1337.76).epsilon(1e-5));
  CHECK(selective.i_us == none.i_us);
  CHECK(selective.f_us == none.f_us);
  CHECK(none.recompute_us == 0);
  CHECK(selective.all_activation_bytes == none.activation_bytes);
  CHECK(none.weight_groups == 9);       // wq wk wv wo w1 w2 w3 and two norms
  m.recompute = Recompute::Mode::Full;  // the block input only; the whole F runs again
  const LayerCost full = layer_cost(m, m.layers[1], &h100(), 1);
  CHECK(full.activation_bytes == tokens * d * h);
  CHECK(full.all_activation_bytes == none.activation_bytes);
  CHECK(full.recompute_us == none.f_us);
  CHECK(full.i_us == none.i_us);
  CHECK(full.w_us == none.w_us);
}

TEST_CASE("embedding: a memory-bound lookup with no input gradient, head: fp32 logits and no output") {
  NetworkModel m = llama3_8b();
  const double tokens = 8192, h = 4096, v = 128256;
  const LayerCost e = layer_cost(m, m.layers.front(), &h100(), 1);
  const double bandwidth = 3.35e12 * 0.58;  // what eager kernels reach on the H100
  CHECK(e.f_us == Approx(2 * tokens * h * 2 / bandwidth * 1e6));
  CHECK(e.i_us == 0);
  CHECK(e.w_us > e.f_us);  // the scatter-add into fp32 gradients reads and writes them
  CHECK(e.params == v * h);
  CHECK(e.output_bytes == tokens * h * 2);
  const LayerCost head = layer_cost(m, m.layers.back(), &h100(), 1);
  // The final norm (read x, write y), the 8192 x 128256 x 4096 GEMM (64 x 501 = 32064 tiles, 243
  // waves of 132, fill 0.99963; 0.87 x 0.99963 x 4096 / 4236 of peak), and the loss reading bf16
  // logits and writing fp32 probabilities.
  const double gemm = 2 * tokens * v * h / (989e12 * 0.87 * (32064.0 / (243 * 132)) * 4096 / 4236) * 1e6;
  CHECK(head.f_us == Approx(gemm + (2 * tokens * h * 2 + tokens * v * (2 + 4)) / bandwidth * 1e6));
  CHECK(head.activation_bytes == tokens * (2 * h * 2 + 4 * v));
  CHECK(head.weight_grad_bytes == tokens * h * 2);
  CHECK(head.output_bytes == 0);
  CHECK(head.params == h + h * v);
  m.tied_embeddings = true;  // the shared matrix counts once, on the embedding
  CHECK(layer_cost(m, m.layers.back(), &h100(), 1).params == h);
  CHECK(layer_cost(m, m.layers.back(), &h100(), 1).f_us == head.f_us);
  CHECK(layer_cost(m, m.layers.front(), &h100(), 1).params == v * h);
  // Recompute is a policy of the blocks: the head keeps its logits whatever it says.
  m.recompute = Recompute::Mode::Full;
  CHECK(layer_cost(m, m.layers.back(), &h100(), 1).activation_bytes == head.activation_bytes);
  CHECK(layer_cost(m, m.layers.back(), &h100(), 1).i_us == head.i_us);
  CHECK(layer_cost(m, m.layers.back(), &h100(), 1).recompute_us == 0);
}

TEST_CASE("MoE block: FLOPs of the active experts, parameters of all, weight reads of those reached") {
  NetworkModel m;
  m.name = "moe";
  m.sequence_length = 1;
  m.vocab = 1000;
  m.hidden = 1024;
  m.heads = 8;
  m.kv_heads = 8;
  m.moe = {64, 2, 4096, 1};
  m.layers = {{LayerType::Embedding, {}}, {LayerType::MoeBlock, {}}, {LayerType::Head, {}}};
  const double h = 1024, ef = 4096, expert = 3 * h * ef, attention = h * (h + 2 * h) + h * h, router = h * 64;
  m.dtype_bytes = 4;  // fp32 makes one token's pass memory-bound
  const LayerCost one = layer_cost(m, m.layers[1], &h100(), 1);
  CHECK(one.params == attention + router + (64 + 1) * expert + 2 * h);
  // One token reaches top_k = 2 experts plus the shared one: its F reads those weights only, not
  // the 64 experts' (3.2 GB, about 1,660 us at 0.58 x 3.35 TB/s).
  const double bandwidth = 3.35e12 * 0.58;
  CHECK(one.f_us > 4 * (attention + 3 * expert) / bandwidth * 1e6);
  CHECK(one.f_us < 4 * (attention + router + 4 * expert) / bandwidth * 1e6 + 40 * 3);
  const double saved = 4 * (4 * h + 2 * h) + 4 * 8 + 4 * (2 * h + 2 * 2 * h + 4 * 3 * ef) + 4 * 64;
  CHECK(one.activation_bytes == saved);
  CHECK(one.weight_grad_bytes == 4 * (3 * h + 2 * h + 3 * ef));
  // Enough tokens reach every expert; compute then bounds F, and its GEMM FLOPs follow the active
  // experts: at least what they take at the GEMMs' best efficiency.
  m.dtype_bytes = 2;
  m.sequence_length = 8192;
  const LayerCost many = layer_cost(m, m.layers[1], &h100(), 4);
  const double tokens = 4 * 8192.0;
  const double flops = 2 * (attention + router + 3 * expert) * tokens;
  CHECK(many.f_us > flops / (989e12 * 0.87) * 1e6);
  // At most twice that with the flash core (2 T s h at 128 / 268 of that efficiency) added: the
  // experts' GEMMs are short (1,024 tokens each, a reduction of 1,024 in the down projection).
  const double core_us = 2 * tokens * 8192 * h / (989e12 * 0.87 * 128 / 268) * 1e6;
  CHECK(many.f_us < 2 * (flops / (989e12 * 0.87) * 1e6 + core_us));
}

TEST_CASE("check_network refuses what cannot be costed") {
  NetworkModel m = llama3_8b();
  CHECK_NOTHROW(check_network(m));
  CHECK(m.block_count() == 32);
  NetworkModel no_head = m;
  no_head.layers.pop_back();
  CHECK_THROWS_WITH(check_network(no_head), Catch::Contains("an embedding, at least one block, and a head"));
  NetworkModel head_inside = m;
  head_inside.layers[5].type = LayerType::Head;
  CHECK_THROWS_WITH(check_network(head_inside), Catch::Contains("layer 5 is a head"));
  NetworkModel odd_heads = m;
  odd_heads.heads = 3;
  CHECK_THROWS_WITH(check_network(odd_heads), Catch::Contains("heads must be > 0 and divide hidden"));
  NetworkModel odd_kv = m;
  odd_kv.kv_heads = 5;
  CHECK_THROWS_WITH(check_network(odd_kv), Catch::Contains("kv_heads must divide heads"));
  NetworkModel moe_without_shape = m;
  moe_without_shape.layers[1].type = LayerType::MoeBlock;
  CHECK_THROWS_WITH(check_network(moe_without_shape), Catch::Contains("a moe_block needs"));
  NetworkModel bad_times = m;
  bad_times.layers[2].measured = LayerTimes{1, -1, 1, 1};
  CHECK_THROWS_WITH(check_network(bad_times), Catch::Contains("layer 2 (block): measured times"));
}
