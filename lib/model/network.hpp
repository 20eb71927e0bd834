// A transformer network described once (a model file, docs/formats.md section 10), and what each
// of its layers costs for one microbatch: F, I and W times in microseconds, and the bytes it holds
// and sends. Times are measured ones when the model gives them, else a roofline on a GpuSpec.
//
// Plain data and arithmetic only: the JSON reader is parse/model_json.hpp; splitting the layers
// into stages is model/partition.hpp; per-stage costs and specs for the simulator are
// model/stage_model.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "model/comm.hpp"
#include "model/gpu.hpp"
#include "model/recompute.hpp"

namespace ppsched {

/// Every bad input to the model library (a model that cannot be costed, a partition that does not
/// fit the model, a layout string that does not parse). The message is complete and names the way
/// out; the caller prints it.
class ModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Head = final norm + output projection + loss.
enum class LayerType : std::uint8_t { Embedding, Block, MoeBlock, Head };

/// "embedding", "block", "moe_block", "head" (the model file's names).
std::string_view layer_type_name(LayerType t);

/// Times of one layer measured at `microbatch_size` samples per microbatch, in microseconds.
struct LayerTimes {
  double f_us = 0, i_us = 0, w_us = 0;
  std::uint32_t microbatch_size = 1;
};

/// One layer of the network, with its measured times when the model gives them.
struct Layer {
  LayerType type;
  std::optional<LayerTimes> measured;
};

/// The shape of a mixture-of-experts FFN (SwiGLU experts), for MoeBlock layers.
struct MoeShape {
  std::uint32_t experts = 0, top_k = 0;
  std::uint64_t expert_ffn_hidden = 0;
  std::uint32_t shared_experts = 0;
};

/// The MLP of a dense block: SwiGLU (gate, up, down: Llama, Mixtral's experts) or GELU (in,
/// out: GPT, Megatron's GPT models). MoE experts are SwiGLU either way.
enum class MlpKind : std::uint8_t { SwiGlu, Gelu };
/// RMSNorm (a scale) or LayerNorm (a scale and a shift).
enum class NormKind : std::uint8_t { RmsNorm, LayerNorm };
/// Rotary embeddings (in the attention, no parameters) or learned absolute positions (a table of
/// sequence_length x hidden added on the embedding).
enum class PositionKind : std::uint8_t { Rope, Learned };
/// The attention core: one fused kernel that never writes the s x s scores (flash attention, the
/// default of current PyTorch, torchtitan and Megatron's TE path) or the eager path that writes
/// them, softmaxes and drops them out in kernels of their own and multiplies them by V (Megatron's
/// local transformer without --use-flash-attn, as in the Zero Bubble paper's runs).
enum class AttentionKind : std::uint8_t { Flash, Unfused };

/// A decoder-only transformer: shape, training precision and memory policy, and its layers in
/// order (embedding, blocks, head). kv_heads 0 means kv_heads = heads.
struct NetworkModel {
  std::string name;
  double dtype_bytes = 2;  // bf16
  std::uint64_t sequence_length = 0, vocab = 0, hidden = 0, ffn_hidden = 0, heads = 0, kv_heads = 0;
  MoeShape moe;  // for MoeBlock layers
  MlpKind mlp = MlpKind::SwiGlu;
  NormKind norm = NormKind::RmsNorm;
  bool bias = false;  ///< the linear layers of attention and MLP have biases (GPT), or none (Llama)
  PositionKind position = PositionKind::Rope;
  AttentionKind attention = AttentionKind::Flash;
  /// Dropout probabilities (Megatron's --attention-dropout, --hidden-dropout): 0 runs no dropout
  /// kernel; above 0 the attention probabilities (or the hidden states after the embedding and
  /// after each residual branch) are dropped out, which draws a random number per element and
  /// keeps a one-byte mask for the backward.
  double attention_dropout = 0, hidden_dropout = 0;
  /// The embedding and the head hold the vocabulary padded up to a multiple of this (Megatron
  /// pads to 128 x the tensor-parallel size, --make-vocab-size-divisible-by; 1: no padding).
  std::uint64_t vocab_multiple = 1;
  std::uint64_t padded_vocab() const;
  /// What a block keeps for its backward and runs again (docs/formats.md gives the bytes of each;
  /// model/recompute.hpp says when PyTorch runs it again).
  Recompute::Mode recompute = Recompute::Mode::None;
  bool tied_embeddings = false;
  double grad_bytes_per_param = 4;        // fp32 main grads
  double optimizer_bytes_per_param = 12;  // Adam: fp32 master + m + v
  std::vector<Layer> layers;              // expanded, in order: embedding, blocks, head
  std::uint32_t block_count() const;      // Block + MoeBlock layers
};

/// Throws ModelError unless `m` can be costed: layers are one embedding, at least one block
/// (Block or MoeBlock) and one head, in that order; hidden, heads, vocab and sequence_length are
/// positive, heads divides hidden and kv_heads divides heads; ffn_hidden is positive when a Block
/// is present and the MoE shape is complete (1 <= top_k <= experts) when a MoeBlock is; sizes per
/// parameter are finite and >= 0 (dtype_bytes > 0); measured times are finite, >= 0, at a
/// microbatch size >= 1.
void check_network(const NetworkModel& m);

/// What one layer costs for a microbatch of `microbatch_size` samples. Times in microseconds,
/// memory in bytes.
struct LayerCost {
  double f_us, i_us, w_us;      ///< without recompute (with_recompute adds it where PyTorch runs it)
  bool checkpointed;            ///< a block under the model's recompute policy
  double recompute_us;          ///< one re-run of its checkpointed part of F (0 when measured: in the times)
  std::uint32_t weight_groups;  ///< parameter groups PyTorch's W differentiates one by one
  double activation_bytes;      ///< held from F to its backward: what checkpointing keeps, if on
  double all_activation_bytes;  ///< M_B: what F would keep without checkpointing
  double weight_grad_bytes;     ///< M_W: held from I to W (the inputs of the layer's linear layers)
  double output_bytes;          ///< sent to the next stage (0 for the head)
  double params;                ///< parameters this layer holds (a tied matrix counts on the embedding)
  double expert_params;         ///< of them, the routed experts' (data-parallel over dp x tp / ep, not dp)
  double static_bytes;          ///< params * (dtype + grad + optimizer bytes per parameter)
  /// The tensor- and expert-parallel collectives inside F and I (already in f_us and i_us).
  double f_comm_us, i_comm_us;
};

/// How one layer is split over GPUs besides the pipeline (`ppsched tune --gpus`): a
/// tensor-parallel group of `tp` GPUs inside a node, with or without sequence parallelism, joined
/// by `tp_link`; for MoE blocks an expert-parallel group of `ep` GPUs over `ep_link`. Each GPU's
/// LayerCost is then its share: ops by shard_ops (model/ops.hpp); parameters, activations and the
/// message to the next stage 1/tp (Korthikanti et al.: without sequence parallelism the norms'
/// and the dropouts' inputs stay whole on every GPU); routed experts 1/ep (not split by tp); and the
/// collectives priced by model/collectives.hpp: per block, two all-reduces of its output in F and
/// two in I (an all-gather and a reduce-scatter each with sequence parallelism, the same volume),
/// and per MoE block a dispatch and a combine all-to-all in each of F and I.
struct LayerParallelism {
  std::uint32_t tp = 1;
  bool sequence_parallel = false;
  Link tp_link;
  std::uint32_t ep = 1;
  Link ep_link;
};

/// The cost of `layer` (one of m.layers) for a microbatch of `microbatch_size` samples: its
/// measured times scaled linearly from their microbatch size when it has them, else the roofline
/// on `gpu`. Throws ModelError when the layer has no measured times and `gpu` is null, when the
/// model's shape cannot cost this layer, or when microbatch_size is 0.
LayerCost layer_cost(const NetworkModel& m, const Layer& layer, const GpuSpec* gpu, std::uint32_t microbatch_size,
                     const LayerParallelism& split = {});

/// layer_cost for the layers of one model, in order, at one microbatch size, GPU and split: a run
/// of unmeasured layers of one type costs the same, so it is priced once (an 80-block model prices
/// three layers, not 82). Holds the last layer priced; `m` must outlive it.
class LayerCostMemo {
 public:
  LayerCostMemo(const NetworkModel& m, const GpuSpec* gpu, std::uint32_t microbatch_size,
                const LayerParallelism& split = {})
      : m_(m), gpu_(gpu), microbatch_size_(microbatch_size), split_(split) {}
  const LayerCost& operator()(const Layer& layer) {
    if (!(last_ && !last_->measured && !layer.measured && last_->type == layer.type)) {
      cost_ = layer_cost(m_, layer, gpu_, microbatch_size_, split_);
      last_ = &layer;
    }
    return cost_;
  }

 private:
  const NetworkModel& m_;
  const GpuSpec* gpu_;
  std::uint32_t microbatch_size_;
  LayerParallelism split_;
  const Layer* last_ = nullptr;
  LayerCost cost_{};
};

/// The FLOPs of one microbatch of `microbatch_size` samples through `layer` (F, I and W, without
/// recompute, unsplit): what MFU counts as the model's work.
double layer_flops(const NetworkModel& m, const Layer& layer, std::uint32_t microbatch_size);

}  // namespace ppsched
