// The op decomposition of a layer (lib/model/ops.cpp) against FLOPs and bytes counted by hand for
// one block of the Zero Bubble paper's 1.5B GPT and one of Llama-3-8B (support/model_shapes.hpp).
#include "model/ops.hpp"

#include <algorithm>
#include <string_view>

#include "support/catch.hpp"
#include "support/model_shapes.hpp"

using namespace ppsched;
using namespace ppsched::test;

namespace {

const Gemm& gemm(const PassOps& pass, std::string_view name) {
  const auto it = std::find_if(pass.gemms.begin(), pass.gemms.end(), [&](const Gemm& g) { return g.name == name; });
  REQUIRE(it != pass.gemms.end());
  return *it;
}

}  // namespace

TEST_CASE("a GPT block's ops: GEMM shapes, FLOPs and bytes counted by hand") {
  // T = 6 x 1024 tokens, h = 2304, f = 4h, d = 2 bytes.
  const double T = 6144, h = 2304, d = 2;
  const LayerOps ops = layer_ops(zb_gpt_1p5b(), LayerType::Block, T);
  // QKV (h -> 3h), out (h -> h), MLP in (h -> 4h), MLP out (4h -> h): 2T x 12h^2 per pass,
  // 782,757,789,696 FLOPs.
  CHECK(ops.f.gemm_flops() == 24 * T * h * h);
  CHECK(ops.f.gemm_flops() == 782757789696.0);
  CHECK(ops.i.gemm_flops() == ops.f.gemm_flops());
  CHECK(ops.w.gemm_flops() == ops.f.gemm_flops());
  const Gemm& in_f = gemm(ops.f, "mlp_in");
  CHECK((in_f.m == T && in_f.n == 4 * h && in_f.k == h));
  const Gemm& in_i = gemm(ops.i, "mlp_in");  // dX = dY W^T
  CHECK((in_i.m == T && in_i.n == h && in_i.k == 4 * h));
  const Gemm& in_w = gemm(ops.w, "mlp_in");  // dW = X^T dY
  CHECK((in_w.m == h && in_w.n == 4 * h && in_w.k == T));
  CHECK(gemm(ops.f, "qkv").n == 3 * h);
  // Attention core: QK^T and AV, 4 s h per token, half under the causal mask: 2 T s h =
  // 28,991,029,248; the flash backward 2.5 times that.
  CHECK(ops.f.attention.flops == 28991029248.0);
  CHECK(ops.i.attention.flops == 2.5 * 28991029248.0);
  CHECK(ops.w.attention.flops == 0);
  // Memory-bound, in units of T h d: F two LayerNorms 2 + 2, two residual adds 3 + 3, GELU over
  // 4h read and written 8: 18 (509,607,936 bytes); I norms 3 + 3, residuals 3 + 3, GELU backward
  // 12: 24; W the norms' gradients 2 + 2 and the biases' gradients, a read of each biased
  // output's gradient: QKV 3h, out h, MLP in 4h, MLP out h: 13.
  CHECK(ops.f.memory_bytes() == 18 * T * h * d);
  CHECK(ops.f.memory_bytes() == 509607936.0);
  CHECK(ops.i.memory_bytes() == 24 * T * h * d);
  CHECK(ops.w.memory_bytes() == 13 * T * h * d);
}

TEST_CASE("a Llama block's ops: grouped-query attention, SwiGLU and rotary, no biases") {
  // T = 8192 tokens (one sample), h = 4096, kv = 8 x 128 = 1024, f = 14336.
  const double T = 8192, h = 4096, kv = 1024, f = 14336, d = 2, s = 8192;
  const LayerOps ops = layer_ops(llama3_8b(), LayerType::Block, T);
  // QKV h x (h + 2kv), out h x h, gate/up h x 2f, down f x h.
  const double linear = h * (h + 2 * kv) + h * h + 3 * h * f;
  CHECK(linear == 218103808.0);
  CHECK(ops.f.gemm_flops() == 2 * T * linear);
  CHECK(gemm(ops.f, "gate_up").n == 2 * f);
  CHECK(gemm(ops.w, "down").m == f);
  CHECK(ops.f.attention.flops == 2 * T * s * h);
  // F: norms 2Thd x 2, rotary on Q and K 2T(h + kv)d, residuals 3Thd x 2, SwiGLU 3Tfd;
  // I: norms 3Thd x 2, rotary again, residuals 3Thd x 2, SwiGLU backward 5Tfd; W: norms only.
  CHECK(ops.f.memory_bytes() == T * d * (4 * h + 2 * (h + kv) + 6 * h + 3 * f));
  CHECK(ops.i.memory_bytes() == T * d * (6 * h + 2 * (h + kv) + 6 * h + 5 * f));
  CHECK(ops.w.memory_bytes() == T * d * 4 * h);
}

TEST_CASE("the head's and the embedding's ops, the vocabulary padded") {
  const double T = 6144, h = 2304, d = 2, g = 4, V = 50304;
  const NetworkModel m = zb_gpt_1p5b();
  const LayerOps head = layer_ops(m, LayerType::Head, T);
  CHECK(head.f.gemm_flops() == 2 * T * h * V);
  CHECK(gemm(head.w, "head").n == V);
  // The LayerNorm, then the loss: logits read at d bytes and fp32 probabilities written.
  CHECK(head.f.memory_bytes() == 2 * T * h * d + T * V * (d + 4));
  const LayerOps embedding = layer_ops(m, LayerType::Embedding, T);
  CHECK(embedding.f.gemms.empty());
  CHECK(embedding.i.memory.empty());
  // Lookup 2Thd and learned positions 3Thd; W scatter-adds both into fp32 gradients.
  CHECK(embedding.f.memory_bytes() == 5 * T * h * d);
  CHECK(embedding.w.memory_bytes() == 2 * T * h * (d + 2 * g));
}

TEST_CASE("a MoE block's experts: each takes its share of the routed tokens") {
  NetworkModel m = llama3_8b();
  m.moe = {.experts = 8, .top_k = 2, .expert_ffn_hidden = 14336, .shared_experts = 1};
  const double T = 4096, h = 4096;
  const LayerOps ops = layer_ops(m, LayerType::MoeBlock, T);
  const Gemm& experts = gemm(ops.f, "experts_gate_up");
  CHECK((experts.m == T * 2 / 8 && experts.count == 8 && experts.n == 2 * 14336.0 && experts.k == h));
  CHECK(gemm(ops.f, "shared_gate_up").m == T);
  CHECK(gemm(ops.f, "router").n == 8);
  // Routed experts do top_k tokens' worth of work whatever their number.
  CHECK(experts.flops() == 2 * (T * 2) * 2 * 14336.0 * h);
}
