// The operations of one layer's passes for one microbatch (issue 45's op-level cost model): the
// GEMMs with their shapes, the attention core's FLOPs, and the memory-bound kernels with the bytes
// each moves. F is the forward; I the input gradient (the GEMMs' input-gradient halves, the
// attention core's backward, the memory-bound backward); W the weight gradient (the GEMMs'
// weight-gradient halves and the small reductions of norms and biases, no attention).
//
// Plain arithmetic on the model's shape; pricing it on a GPU is model/network.cpp's. A GEMM
// C[m x n] = A[m x k] B[k x n] costs 2mnk FLOPs; for a linear layer Y = X W with X of T tokens by
// k and W of k by n, F is (m, n, k) = (T, n, k), I is dX = dY W^T: (T, k, n), and W is
// dW = X^T dY: (k, n, T). The unfused attention core is batched GEMMs, one per sample and head:
// scores S = Q K^T of (s, s, head_dim), context P V of (s, head_dim, s).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "model/network.hpp"

namespace ppsched {

struct Gemm {
  std::string_view name;  ///< "qkv", "out", "mlp_in", "mlp_out", "gate_up", "down", "router", "experts", "head"
  double m = 0, n = 0, k = 0;
  double count = 1;  ///< identical GEMMs (one per expert)
  double flops() const { return 2 * m * n * k * count; }
};

/// A kernel bound by memory bandwidth (the bytes it reads and writes) or, for a dropout, by the
/// random numbers it draws.
struct MemoryOp {
  std::string_view name;
  double bytes = 0;
  double random = 0;  ///< random numbers drawn (one per element a dropout keeps or drops)
};

/// The fused (flash) attention core of a pass: its FLOPs, the head dimension its inner products
/// run over, and the bytes it reads and writes (Q, K, V, O and their gradients; never the scores).
struct FusedAttention {
  double flops = 0, head_dim = 0, bytes = 0, random = 0;
};

struct PassOps {
  std::vector<Gemm> gemms;
  FusedAttention attention;  ///< flash attention only; the unfused core is GEMMs and memory ops
  std::vector<MemoryOp> memory;
  double gemm_flops() const;
  double memory_bytes() const;
};

struct LayerOps {
  PassOps f, i, w;
  /// The attention core's forward alone (part of f): what selective recompute runs again.
  PassOps core;
};

/// The operations of `type`'s passes over `tokens` tokens (microbatch size x sequence length).
LayerOps layer_ops(const NetworkModel& m, LayerType type, double tokens);

/// What one GPU of a tensor-parallel group of `tp` (and an expert-parallel group of `ep`) runs of
/// `ops`, Megatron's split: the column-parallel linears (QKV, the MLP's first, the head's
/// vocabulary, the experts' gate and up) keep 1/tp of their outputs, the row-parallel ones (the
/// output projection, the MLP's last, the experts' down) 1/tp of their inputs, the attention core
/// 1/tp of the heads, the elementwise work between them (rotary, softmax, activation, the loss
/// over the vocabulary) 1/tp; the norms, residuals and dropouts outside them only with sequence
/// parallelism. The router is replicated. Experts are not split by the
/// tensor group (expert tensor parallelism 1, torchtitan's only choice and common in Megatron):
/// they spread over `ep` GPUs, 1/ep of them on each, each over the tokens of ep GPUs, a GPU's
/// tokens being 1/tp of the microbatch's. The collectives that join the pieces are not ops:
/// layer_cost prices them.
void shard_ops(LayerOps& ops, std::uint32_t tp, bool sequence_parallel, std::uint32_t ep);

}  // namespace ppsched
