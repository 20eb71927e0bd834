#include "model/network.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "model/collectives.hpp"
#include "model/op_pricing.hpp"
#include "model/ops.hpp"

namespace ppsched {

namespace {

// What the memory model needs about one layer, per token (bytes already multiplied by the element
// size). docs/formats.md section 10 states the same formulas; the times come from model/ops.hpp.
struct Profile {
  double params = 0;         // parameters held (static memory)
  double expert_params = 0;  // of them, the routed experts'

  double saved_bytes = 0;         // M_B per token under the model's recompute policy
  double all_saved_bytes = 0;     // M_B per token without recompute (what F writes, I reads)
  double linear_input_bytes = 0;  // M_W per token
  double output_bytes = 0;        // sent forward per token
  // Parameter groups PyTorch's stage_backward_weight differentiates one autograd call each: a
  // group per weight whose gradient path joins the input path at a node of its own (every
  // bias-free linear and every norm).
  std::uint32_t weight_groups = 1;
};

std::string where(const NetworkModel& m, const Layer& layer) {
  const Layer* first = m.layers.data();
  if (&layer >= first && &layer < first + m.layers.size())
    return "layer " + std::to_string(&layer - first) + " (" + std::string(layer_type_name(layer.type)) + ")";
  return "a layer (" + std::string(layer_type_name(layer.type)) + ")";
}

bool finite_nonnegative(double x) { return std::isfinite(x) && x >= 0; }

std::uint64_t kv_heads_of(const NetworkModel& m) { return m.kv_heads ? m.kv_heads : m.heads; }

void check_shape(const NetworkModel& m, LayerType type) {
  auto need = [&](bool ok, const char* what) {
    if (!ok) throw ModelError(std::string("model '") + m.name + "': " + what);
  };
  need(std::isfinite(m.dtype_bytes) && m.dtype_bytes > 0, "dtype_bytes must be a finite number > 0");
  need(finite_nonnegative(m.grad_bytes_per_param), "grad_bytes_per_param must be a finite number >= 0");
  need(finite_nonnegative(m.optimizer_bytes_per_param), "optimizer_bytes_per_param must be a finite number >= 0");
  need(m.hidden > 0, "hidden must be > 0");
  need(m.sequence_length > 0, "sequence_length must be > 0");
  if (type == LayerType::Embedding || type == LayerType::Head) need(m.vocab > 0, "vocab must be > 0");
  if (type == LayerType::Block || type == LayerType::MoeBlock) {
    need(m.heads > 0 && m.hidden % m.heads == 0, "heads must be > 0 and divide hidden");
    need(m.heads % kv_heads_of(m) == 0, "kv_heads must divide heads");
  }
  if (type == LayerType::Block) need(m.ffn_hidden > 0, "ffn_hidden must be > 0 for a block");
  if (type == LayerType::MoeBlock)
    need(m.moe.experts > 0 && m.moe.top_k >= 1 && m.moe.top_k <= m.moe.experts && m.moe.expert_ffn_hidden > 0,
         "a moe_block needs moe.experts > 0, 1 <= moe.top_k <= moe.experts and moe.expert_ffn_hidden > 0");
}

// Parameters of one norm: a scale, and for LayerNorm a shift.
double norm_params(const NetworkModel& m) {
  return m.norm == NormKind::LayerNorm ? 2.0 * double(m.hidden) : double(m.hidden);
}

Profile profile(const NetworkModel& m, LayerType type) {
  const double h = double(m.hidden), d = m.dtype_bytes, v = double(m.padded_vocab()), s = double(m.sequence_length);
  const double norm = norm_params(m);
  Profile p;
  switch (type) {
    case LayerType::Embedding:
      // A lookup (and learned positions added): no FLOPs; the token ids (int64) are what its
      // backward (a scatter-add) needs.
      p.params = v * h + (m.position == PositionKind::Learned ? s * h : 0.0);
      p.saved_bytes = p.all_saved_bytes = p.linear_input_bytes = 8 + (m.hidden_dropout > 0 ? h : 0.0);
      p.output_bytes = h * d;
      return p;
    case LayerType::Head:
      // Final norm, output projection, cross-entropy over fp32 logits (not chunked).
      p.params = norm + (m.tied_embeddings ? 0 : v * h);
      p.saved_bytes = p.all_saved_bytes = 2 * h * d + 4 * v;
      p.linear_input_bytes = h * d;
      p.weight_groups = 2;  // final norm, output projection
      return p;
    case LayerType::Block:
    case LayerType::MoeBlock:
      break;
  }
  const double heads = double(m.heads), kv = double(kv_heads_of(m)) * (h / heads);
  const double attention_linear = h * (h + 2 * kv) + h * h;  // QKV, output projection
  const double attention_bias = m.bias ? (h + 2 * kv) + h : 0.0;
  // Attention saves: norm input, QKV input, Q K V, the attention output (= out-projection input),
  // and flash attention's fp32 log-sum-exp per head, or the eager core's softmax output (all s
  // scores of each head) and, with attention dropout, its mask and dropped-out copy. Hidden
  // dropout keeps a mask byte per element after each residual branch.
  const double core_scores =
      m.attention == AttentionKind::Flash ? 4 * heads : heads * s * (d + (m.attention_dropout > 0 ? 1 + d : 0.0));
  const double hidden_masks = m.hidden_dropout > 0 ? 2 * h : 0.0;
  const double attention_saved = d * (4 * h + 2 * kv) + core_scores + hidden_masks;
  const double attention_core_saved = d * h + core_scores;  // what selective recompute drops
  p.output_bytes = h * d;
  if (type == LayerType::Block) {
    const double f = double(m.ffn_hidden);
    const bool gelu = m.mlp == MlpKind::Gelu;
    // SwiGLU: gate, up, down; GELU: in, out.
    const double mlp_linear = (gelu ? 2 : 3) * h * f;
    const double mlp_bias = m.bias ? (gelu ? f : 2 * f) + h : 0.0;
    p.params = attention_linear + mlp_linear + attention_bias + mlp_bias + 2 * norm;  // two norms
    // FFN saves: norm input, the first linear's input, then for SwiGLU gate out, up out,
    // silu(gate) and the down input; for GELU the GELU input and the second linear's input.
    p.all_saved_bytes = attention_saved + d * (2 * h + (gelu ? 2 : 4) * f);
    p.saved_bytes = p.all_saved_bytes;
    if (m.recompute == Recompute::Mode::Selective) p.saved_bytes -= attention_core_saved + d * (gelu ? 1 : 2) * f;
    p.linear_input_bytes = d * (3 * h + f);    // QKV input, out-projection input, MLP input, its last linear's input
    p.weight_groups = 4 + (gelu ? 2 : 3) + 2;  // wq wk wv wo, the MLP's linears, two norms
  } else {
    const double e = m.moe.experts, k = m.moe.top_k, sh = m.moe.shared_experts, ef = double(m.moe.expert_ffn_hidden);
    const double router = h * e, expert = 3 * h * ef;
    p.params = attention_linear + attention_bias + router + (e + sh) * expert + 2 * norm;
    p.expert_params = e * expert;
    // FFN saves: norm input, router input, fp32 router logits, the top_k permuted copies of each
    // token in and out of the experts, and per active expert gate, up, silu(gate), down input.
    p.all_saved_bytes = attention_saved + d * (2 * h + 2 * k * h + 4 * (k + sh) * ef) + 4 * e;
    p.saved_bytes = p.all_saved_bytes;
    if (m.recompute == Recompute::Mode::Selective) p.saved_bytes -= attention_core_saved + d * 2 * (k + sh) * ef;
    // QKV input, out-projection input, router/shared-expert input, permuted expert inputs, down inputs.
    p.linear_input_bytes = d * (3 * h + k * h + (k + sh) * ef);
    // wq wk wv wo, the router, the grouped experts' w1 w2 w3, the shared experts', two norms.
    p.weight_groups = 4 + 1 + 3 + (sh > 0 ? 3 : 0) + 2;
  }
  if (m.recompute == Recompute::Mode::Full) p.saved_bytes = d * h;  // the block input only
  return p;
}

}  // namespace

std::string_view layer_type_name(LayerType t) {
  switch (t) {
    case LayerType::Embedding:
      return "embedding";
    case LayerType::Block:
      return "block";
    case LayerType::MoeBlock:
      return "moe_block";
    case LayerType::Head:
      return "head";
  }
  return "?";
}

std::uint64_t NetworkModel::padded_vocab() const {
  const std::uint64_t k = vocab_multiple ? vocab_multiple : 1;
  return (vocab + k - 1) / k * k;
}

std::uint32_t NetworkModel::block_count() const {
  return static_cast<std::uint32_t>(std::count_if(layers.begin(), layers.end(), [](const Layer& l) {
    return l.type == LayerType::Block || l.type == LayerType::MoeBlock;
  }));
}

void check_network(const NetworkModel& m) {
  const std::string model = "model '" + m.name + "': ";
  if (m.layers.size() < 3 || m.layers.front().type != LayerType::Embedding || m.layers.back().type != LayerType::Head)
    throw ModelError(model + "the layers must be an embedding, at least one block, and a head, in that order");
  for (std::size_t i = 1; i + 1 < m.layers.size(); ++i)
    if (m.layers[i].type != LayerType::Block && m.layers[i].type != LayerType::MoeBlock)
      throw ModelError(model + "layer " + std::to_string(i) + " is a " +
                       std::string(layer_type_name(m.layers[i].type)) +
                       ": only blocks may stand between the embedding and the head");
  bool checked[4] = {false, false, false, false};
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    const Layer& l = m.layers[i];
    auto& seen = checked[static_cast<std::size_t>(l.type)];
    if (!seen) check_shape(m, l.type);
    seen = true;
    if (!l.measured) continue;
    const LayerTimes& t = *l.measured;
    if (!finite_nonnegative(t.f_us) || !finite_nonnegative(t.i_us) || !finite_nonnegative(t.w_us) ||
        t.microbatch_size == 0)
      throw ModelError(model + where(m, l) + ": measured times must be finite and >= 0, at a microbatch size >= 1");
  }
}

namespace {

// One GPU's share of a layer's profile under tensor (and expert) parallelism (layer_cost's
// comment says what splits).
Profile split_profile(const NetworkModel& m, LayerType type, Profile p, const LayerParallelism& split) {
  const double t = std::max(1u, split.tp), d = m.dtype_bytes, h = double(m.hidden);
  if (t <= 1 && split.ep <= 1) return p;
  const double whole = split.sequence_parallel ? t : 1.0;  // what stays whole without SP divides by this
  auto share = [&](double total, double replicated) {
    replicated = std::min(total, replicated);
    return replicated / whole + (total - replicated) / t;
  };
  const double norm = norm_params(m);
  switch (type) {
    case LayerType::Embedding:
      p.params = double(m.padded_vocab()) * h / t + (p.params - double(m.padded_vocab()) * h);
      p.saved_bytes = p.all_saved_bytes = p.linear_input_bytes = share(p.saved_bytes, p.saved_bytes);
      break;
    case LayerType::Head:
      p.params = norm + (p.params - norm) / t;
      p.saved_bytes = p.all_saved_bytes = share(p.saved_bytes, 2 * h * d);
      p.linear_input_bytes = share(p.linear_input_bytes, p.linear_input_bytes);
      break;
    case LayerType::Block:
    case LayerType::MoeBlock: {
      // Whole on every GPU without SP: the two norms' inputs, the column-parallel linears'
      // inputs and the hidden dropout's masks (Korthikanti et al., table 2).
      const double masks = m.hidden_dropout > 0 ? 2 * h : 0.0;
      const double replicated = m.recompute == Recompute::Mode::Full ? d * h : 4 * h * d + masks;
      const double router = type == LayerType::MoeBlock ? h * double(m.moe.experts) : 0.0;
      const double experts = p.expert_params, sharded = p.params - 2 * norm - router - experts;
      p.expert_params = experts / std::max(1u, split.ep);
      p.params = 2 * norm + router + sharded / t + p.expert_params;
      p.saved_bytes = share(p.saved_bytes, replicated);
      p.all_saved_bytes = share(p.all_saved_bytes, 4 * h * d + masks);
      p.linear_input_bytes = share(p.linear_input_bytes, 2 * h * d);
      break;
    }
  }
  p.output_bytes /= t;  // a pipeline stage sends each GPU's slice (SP, or Megatron's scatter-gather)
  return p;
}

// The collectives of one pass of `type` over `tokens` tokens (layer_cost's comment).
double collective_us(const NetworkModel& m, LayerType type, double tokens, bool forward,
                     const LayerParallelism& split) {
  const double bytes = tokens * double(m.hidden) * m.dtype_bytes;
  const std::uint32_t t = split.tp;
  double us = 0;
  switch (type) {
    case LayerType::Embedding:
      if (forward) us += all_reduce_us(bytes, t, split.tp_link);  // the vocabulary-parallel lookup's sum
      break;
    case LayerType::Head:
      // The input gathered (SP) or its gradient summed; the loss's per-token max and sums are small.
      us += forward ? (split.sequence_parallel ? all_gather_us(bytes, t, split.tp_link) : 0.0)
                    : all_reduce_us(bytes, t, split.tp_link);
      break;
    case LayerType::Block:
    case LayerType::MoeBlock:
      us += 2 * all_reduce_us(bytes, t, split.tp_link);
      if (type == LayerType::MoeBlock)  // dispatch and combine of each token's top-k copies
        us +=
            2 * all_to_all_us(bytes * double(m.moe.top_k) / (split.sequence_parallel ? t : 1), split.ep, split.ep_link);
      break;
  }
  return us;
}

}  // namespace

double layer_flops(const NetworkModel& m, const Layer& layer, std::uint32_t microbatch_size) {
  const LayerOps ops = layer_ops(m, layer.type, double(microbatch_size) * double(m.sequence_length));
  double flops = 0;
  for (const PassOps* pass : {&ops.f, &ops.i, &ops.w}) flops += pass->gemm_flops() + pass->attention.flops;
  return flops;
}

LayerCost layer_cost(const NetworkModel& m, const Layer& layer, const GpuSpec* gpu, std::uint32_t microbatch_size,
                     const LayerParallelism& split) {
  if (microbatch_size == 0) throw ModelError("the microbatch size must be at least 1");
  check_shape(m, layer.type);
  if (split.tp == 0 || split.ep == 0) throw ModelError("tensor- and expert-parallel groups hold at least one GPU");
  const double tokens = double(microbatch_size) * double(m.sequence_length);
  const Profile p = split_profile(m, layer.type, profile(m, layer.type), split);
  LayerCost c{};
  c.activation_bytes = tokens * p.saved_bytes;
  c.all_activation_bytes = tokens * p.all_saved_bytes;
  c.weight_groups = p.weight_groups;
  c.checkpointed =
      m.recompute != Recompute::Mode::None && (layer.type == LayerType::Block || layer.type == LayerType::MoeBlock);
  c.weight_grad_bytes = tokens * p.linear_input_bytes;
  c.output_bytes = tokens * p.output_bytes;
  c.params = p.params;
  c.expert_params = p.expert_params;
  c.static_bytes = p.params * (m.dtype_bytes + m.grad_bytes_per_param + m.optimizer_bytes_per_param);

  if (layer.measured) {
    if (split.tp > 1 || split.ep > 1)
      throw ModelError(where(m, layer) +
                       ": measured times are for the whole layer; splitting it over GPUs needs "
                       "the op-level model (--gpu NAME, a layer without measured times)");
    // Measured times already include whatever recompute the measured run did.
    const LayerTimes& t = *layer.measured;
    if (t.microbatch_size == 0) throw ModelError(where(m, layer) + ": measured at microbatch size 0");
    const double scale = double(microbatch_size) / double(t.microbatch_size);
    c.f_us = t.f_us * scale;
    c.i_us = t.i_us * scale;
    c.w_us = t.w_us * scale;
    return c;
  }
  if (!gpu) throw ModelError(where(m, layer) + " has no measured times; give --gpu NAME for the roofline");

  const double d = m.dtype_bytes;
  LayerOps ops = layer_ops(m, layer.type, tokens);
  shard_ops(ops, split.tp, split.sequence_parallel, split.ep);
  c.f_comm_us = collective_us(m, layer.type, tokens, true, split);
  c.i_comm_us = collective_us(m, layer.type, tokens, false, split);
  c.f_us = price_pass(*gpu, ops.f, d).total_us() + c.f_comm_us;
  c.i_us = price_pass(*gpu, ops.i, d).total_us() + c.i_comm_us;
  c.w_us = price_pass(*gpu, ops.w, d).total_us();
  // One re-run of what checkpointing dropped: the whole F, or the attention core alone.
  if (c.checkpointed && m.recompute == Recompute::Mode::Full) c.recompute_us = c.f_us;
  if (c.checkpointed && m.recompute == Recompute::Mode::Selective)
    c.recompute_us = price_pass(*gpu, ops.core, d).total_us();
  return c;
}

}  // namespace ppsched
