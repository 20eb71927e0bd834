// The op decomposition of a layer (ops.hpp). Memory-bound kernels are counted at the bytes they
// must move, each tensor read or written once at the dtype's size (fp32 where the kernel keeps
// fp32: the loss's probabilities, the gradients' accumulators); biases are added in the GEMMs'
// epilogues and move nothing of their own in F.
#include "model/ops.hpp"

#include <algorithm>

namespace ppsched {

namespace {

// A linear layer Y = X W, X of `tokens` x k, W of k x n, `count` of them: its three GEMMs.
void linear(LayerOps& ops, std::string_view name, double tokens, double k, double n, double count = 1) {
  ops.f.gemms.push_back({name, tokens, n, k, count});
  ops.i.gemms.push_back({name, tokens, k, n, count});
  ops.w.gemms.push_back({name, k, n, tokens, count});
}

void memory(PassOps& pass, std::string_view name, double bytes, double random = 0) {
  if (bytes > 0) pass.memory.push_back({name, bytes, random});
}

// A norm over `elements` values of d bytes: F reads x and writes y; I reads x and dy and writes dx;
// W reduces x and dy into the scale's (and shift's) gradient.
void norm(LayerOps& ops, double elements, double d) {
  memory(ops.f, "norm", 2 * elements * d);
  memory(ops.i, "norm", 3 * elements * d);
  memory(ops.w, "norm_grad", 2 * elements * d);
}

// A residual add of `elements`: F reads both inputs and writes the sum; I adds the two gradient
// paths that meet there. With hidden dropout the branch is dropped out in the same kernel (F also
// draws a number and writes a mask byte per element; I reads the mask to pass the gradient back).
void residual(LayerOps& ops, const NetworkModel& m, double elements) {
  const double d = m.dtype_bytes;
  if (m.hidden_dropout > 0) {
    memory(ops.f, "dropout_add", (3 * d + 1) * elements, elements);
    memory(ops.i, "dropout_grad", (2 * d + 1) * elements);
  } else {
    memory(ops.f, "residual", 3 * elements * d);
  }
  memory(ops.i, "residual", 3 * elements * d);
}

// The MLP's activation over `tokens` x `width`: SwiGLU reads gate and up and writes their product
// (its backward reads gate, up and dy and writes both gradients); GELU reads x and writes y (its
// backward reads x and dy and writes dx).
void activation(LayerOps& ops, MlpKind kind, double elements, double d) {
  if (kind == MlpKind::SwiGlu) {
    memory(ops.f, "swiglu", 3 * elements * d);
    memory(ops.i, "swiglu", 5 * elements * d);
  } else {
    memory(ops.f, "gelu", 2 * elements * d);
    memory(ops.i, "gelu", 3 * elements * d);
  }
}

// The attention core over `tokens` tokens, in both f and core (what selective recompute re-runs).
void attention_core(LayerOps& ops, const NetworkModel& m, double tokens) {
  const double h = double(m.hidden), d = m.dtype_bytes, s = double(m.sequence_length), heads = double(m.heads);
  const double kv = double(m.kv_heads ? m.kv_heads : m.heads) * (h / heads), head_dim = h / heads;
  const double batches = tokens / s * heads;  // one (s x s) problem per sample and head
  const double scores = batches * s * s;
  const bool dropout = m.attention_dropout > 0;
  PassOps core;
  if (m.attention == AttentionKind::Flash) {
    // QK^T and AV, 2 x 2 x s x h per token, half of it under the causal mask. The backward
    // recomputes QK^T and forms dV, dP, dQ and dK: five products to the forward's two. F reads
    // Q, K, V and writes O and an fp32 log-sum-exp per head; I also reads O and dO and writes dQ,
    // dK and dV. A dropout inside the kernel draws a number per kept score, again in the backward.
    const double qkv = tokens * (h + 2 * kv) * d;
    core.attention = {2 * tokens * s * h, head_dim, qkv + tokens * (h * d + 4 * heads), dropout ? scores / 2 : 0};
    ops.i.attention = {2.5 * core.attention.flops, head_dim, 2 * qkv + tokens * (2 * h * d + 4 * heads),
                       core.attention.random};
  } else {
    // Eager: the scores S = QK^T are written in full (the mask only zeroes them), softmaxed in
    // place of a copy, dropped out, multiplied by V; the context is transposed back to tokens.
    // The backward runs the two products' four gradients and the softmax's and dropout's
    // backward over the whole s x s.
    core.gemms.push_back({"scores", s, s, head_dim, batches});
    memory(core, "softmax", 2 * scores * d);
    if (dropout) memory(core, "attention_dropout", (2 * d + 1) * scores, scores);
    core.gemms.push_back({"context", s, head_dim, s, batches});
    memory(core, "context_transpose", 2 * tokens * h * d);
    ops.i.gemms.push_back({"context_dprobs", s, s, head_dim, batches});
    ops.i.gemms.push_back({"context_dv", s, head_dim, s, batches});
    memory(ops.i, "context_transpose", 2 * tokens * h * d);
    if (dropout) memory(ops.i, "attention_dropout", (2 * d + 1) * scores);
    memory(ops.i, "softmax", 3 * scores * d);
    ops.i.gemms.push_back({"scores_dq", s, head_dim, s, batches});
    ops.i.gemms.push_back({"scores_dk", s, head_dim, s, batches});
  }
  ops.f.attention = core.attention;
  ops.f.gemms.insert(ops.f.gemms.end(), core.gemms.begin(), core.gemms.end());
  ops.f.memory.insert(ops.f.memory.end(), core.memory.begin(), core.memory.end());
  ops.core = std::move(core);
}

// The attention half of a block: norm, QKV, rotary, the core, output projection, residual.
void attention(LayerOps& ops, const NetworkModel& m, double tokens) {
  const double h = double(m.hidden), d = m.dtype_bytes;
  const double kv = double(m.kv_heads ? m.kv_heads : m.heads) * (h / double(m.heads));
  norm(ops, tokens * h, d);
  linear(ops, "qkv", tokens, h, h + 2 * kv);
  if (m.position == PositionKind::Rope) {
    memory(ops.f, "rotary", 2 * tokens * (h + kv) * d);
    memory(ops.i, "rotary", 2 * tokens * (h + kv) * d);
  }
  attention_core(ops, m, tokens);
  linear(ops, "out", tokens, h, h);
  residual(ops, m, tokens * h);
  if (m.bias) memory(ops.w, "bias_grad", tokens * (h + 2 * kv + h) * d);
}

}  // namespace

double PassOps::gemm_flops() const {
  double total = 0;
  for (const Gemm& g : gemms) total += g.flops();
  return total;
}

double PassOps::memory_bytes() const {
  double total = 0;
  for (const MemoryOp& op : memory) total += op.bytes;
  return total;
}

LayerOps layer_ops(const NetworkModel& m, LayerType type, double tokens) {
  const double h = double(m.hidden), d = m.dtype_bytes, g = m.grad_bytes_per_param;
  const double v = double(m.padded_vocab());
  LayerOps ops;
  switch (type) {
    case LayerType::Embedding:
      // A lookup (gather the rows, write the output), learned positions added; W scatter-adds the
      // output gradient into the fp32 gradient rows (read and written).
      memory(ops.f, "lookup", 2 * tokens * h * d);
      memory(ops.w, "scatter_add", tokens * h * (d + 2 * g));
      if (m.position == PositionKind::Learned) {
        memory(ops.f, "positions", 3 * tokens * h * d);
        memory(ops.w, "positions_grad", tokens * h * (d + 2 * g));
      }
      if (m.hidden_dropout > 0) {  // the embedding's output is dropped out; W passes its gradient back
        memory(ops.f, "dropout", (2 * d + 1) * tokens * h, tokens * h);
        memory(ops.w, "dropout_grad", (2 * d + 1) * tokens * h);
      }
      return ops;
    case LayerType::Head:
      // Final norm, the vocabulary GEMM, and the cross-entropy: F reads the logits and keeps fp32
      // probabilities for the backward, I reads them and writes the logits' gradient.
      norm(ops, tokens * h, d);
      linear(ops, "head", tokens, h, v);
      memory(ops.f, "loss", tokens * v * (d + 4));
      memory(ops.i, "loss", tokens * v * (4 + d));
      return ops;
    case LayerType::Block: {
      attention(ops, m, tokens);
      const double f = double(m.ffn_hidden);
      norm(ops, tokens * h, d);
      if (m.mlp == MlpKind::SwiGlu) {
        linear(ops, "gate_up", tokens, h, 2 * f);
        activation(ops, MlpKind::SwiGlu, tokens * f, d);
        linear(ops, "down", tokens, f, h);
      } else {
        linear(ops, "mlp_in", tokens, h, f);
        activation(ops, MlpKind::Gelu, tokens * f, d);
        linear(ops, "mlp_out", tokens, f, h);
      }
      residual(ops, m, tokens * h);
      if (m.bias) memory(ops.w, "bias_grad", tokens * ((m.mlp == MlpKind::SwiGlu ? 2 * f : f) + h) * d);
      return ops;
    }
    case LayerType::MoeBlock: {
      attention(ops, m, tokens);
      const double e = m.moe.experts, k = m.moe.top_k, shared = m.moe.shared_experts;
      const double ef = double(m.moe.expert_ffn_hidden);
      norm(ops, tokens * h, d);
      linear(ops, "router", tokens, h, e);
      // Routing: fp32 logits, softmax and top-k (read and written), then each token's k copies
      // dispatched to their experts and combined back (and the same in the backward).
      memory(ops.f, "route", 2 * tokens * e * 4);
      memory(ops.i, "route", 2 * tokens * e * 4);
      memory(ops.f, "dispatch_combine", 2 * (tokens + k * tokens) * h * d);
      memory(ops.i, "dispatch_combine", 2 * (tokens + k * tokens) * h * d);
      // The tokens' k copies reach at most min(E, k x tokens) experts, spread evenly: only those
      // run (and have their weights read).
      const double reached = std::min(e, k * tokens), per_expert = tokens * k / reached;
      linear(ops, "experts_gate_up", per_expert, h, 2 * ef, reached);
      linear(ops, "experts_down", per_expert, ef, h, reached);
      activation(ops, MlpKind::SwiGlu, k * tokens * ef, d);
      if (shared > 0) {
        linear(ops, "shared_gate_up", tokens, h, 2 * ef, shared);
        linear(ops, "shared_down", tokens, ef, h, shared);
        activation(ops, MlpKind::SwiGlu, shared * tokens * ef, d);
      }
      residual(ops, m, tokens * h);
      return ops;
    }
  }
  return ops;
}

namespace {

enum class Split : std::uint8_t { Columns, Rows, Heads, Experts, None };

// How a GEMM of ops.cpp's names splits under tensor (and expert) parallelism.
Split split_of(std::string_view name) {
  for (std::string_view n : {"qkv", "mlp_in", "gate_up", "head", "shared_gate_up"})
    if (name == n) return Split::Columns;
  for (std::string_view n : {"out", "mlp_out", "down", "shared_down"})
    if (name == n) return Split::Rows;
  if (name == "experts_gate_up" || name == "experts_down") return Split::Experts;
  if (name == "router") return Split::None;
  return Split::Heads;  // the eager attention core's batched GEMMs, one per sample and head
}

// Elementwise kernels inside the tensor-parallel region: split with the heads or the columns.
bool inside_split(std::string_view name) {
  for (std::string_view n :
       {"rotary", "softmax", "attention_dropout", "context_transpose", "swiglu", "gelu", "loss", "bias_grad"})
    if (name == n) return true;
  return false;
}

// `pass` is 0 for F, 1 for I, 2 for W: linear() stores F as (T, n, k), I as (T, k, n), W as (k, n, T).
void shard_pass(PassOps& ops, int pass, double tp, bool sp, double ep) {
  for (Gemm& g : ops.gemms) {
    switch (split_of(g.name)) {
      case Split::Columns:
        (pass == 1 ? g.k : g.n) /= tp;
        break;
      case Split::Rows:
        (pass == 0 ? g.k : pass == 1 ? g.n : g.m) /= tp;
        break;
      case Split::Experts: {
        const bool gate_up = g.name == "experts_gate_up";
        if (gate_up)
          (pass == 1 ? g.k : g.n) /= tp;
        else
          (pass == 0 ? g.k : pass == 1 ? g.n : g.m) /= tp;
        g.count /= ep;                  // the GPU's experts
        (pass == 2 ? g.k : g.m) *= ep;  // each over the tokens of ep GPUs
        break;
      }
      case Split::Heads:
        g.count /= tp;
        break;
      case Split::None:
        break;
    }
  }
  ops.attention.flops /= tp;
  ops.attention.bytes /= tp;
  ops.attention.random /= tp;
  for (MemoryOp& op : ops.memory) {
    if (!inside_split(op.name) && !sp) continue;
    op.bytes /= tp;
    op.random /= tp;
  }
}

}  // namespace

void shard_ops(LayerOps& ops, std::uint32_t tp, bool sequence_parallel, std::uint32_t ep) {
  if (tp <= 1 && ep <= 1) return;
  const double t = std::max(1u, tp), e = std::max(1u, ep);
  shard_pass(ops.f, 0, t, sequence_parallel, e);
  shard_pass(ops.i, 1, t, sequence_parallel, e);
  shard_pass(ops.w, 2, t, sequence_parallel, e);
  shard_pass(ops.core, 0, t, sequence_parallel, e);
}

}  // namespace ppsched
