// What a tuned run is, in the terms the frameworks' settings need: the model's shape, the parallel
// layout (pipeline, tensor, data or FSDP, expert), the schedule and its batch. `ppsched tune
// --emit-best` fills it from its best candidate; the faces that write it for a framework are
// report/torchtitan_settings.hpp (torchtitan at its head: command-line overrides and a
// config_registry function), report/torchtitan_toml.hpp (torchtitan's older TOML configs) and
// report/megatron_args.hpp (Megatron-LM's command-line arguments).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/network.hpp"
#include "model/partition.hpp"
#include "tune/layouts.hpp"
#include "tune/sharding.hpp"
#include "tune/tune.hpp"

namespace ppsched {

/// What a block keeps for its backward (the model file's recompute modes).
enum class RecomputeSetting : std::uint8_t { None, Selective, Full };

struct RunSettings {
  // ---- the model (from the model file) ----
  std::string model_name;
  std::uint64_t blocks = 0;  ///< transformer blocks (dense and MoE)
  std::uint64_t hidden = 0, ffn_hidden = 0, heads = 0, kv_heads = 0, vocab = 0, sequence_length = 0;
  bool swiglu = true, tied_embeddings = false;
  std::uint32_t experts = 0, top_k = 0;  ///< 0 experts: a dense model
  std::uint64_t expert_ffn_hidden = 0;

  // ---- the layout: pipeline x tensor x data (x expert, within data x tensor) = GPUs ----
  std::uint32_t gpus = 0;
  std::uint32_t pp = 1;               ///< pipeline ranks
  std::uint32_t stages_per_rank = 1;  ///< virtual stages per pipeline rank
  bool v_placement = false;           ///< stages placed in a V (ZBV, DualPipeV), else looped
  std::uint32_t tp = 1;               ///< tensor parallel, within a node
  bool sequence_parallel = false;
  std::uint32_t dp = 1;  ///< data-parallel degree (replicas of the pipeline), sharded or not
  DataSharding sharding = DataSharding::None;
  bool reshard_after_forward = true;  ///< FSDP: free gathered parameters after the forward
  std::uint32_t ep = 1;               ///< expert parallel (MoE), within dp x tp

  // ---- the schedule and the batch ----
  std::string family;                 ///< ppsched's family name of the chosen schedule, or "auto"
  std::string schedule_csv;           ///< the compute-only schedule's file (PyTorch's CSV)
  std::uint32_t microbatches = 0;     ///< per pipeline, per step
  std::uint32_t microbatch_size = 1;  ///< samples per microbatch
  std::uint64_t global_batch = 0;     ///< samples per step, over every replica
  RecomputeSetting recompute = RecomputeSetting::None;
  /// Per stage in pipeline order (stage s on rank s % pp, or the V's placement), the model's
  /// layers as letters: "E" embedding, "t" per block, "L" head: {"Etttt", "tttt", ..., "ttL"}.
  std::vector<std::string> stage_layers;

  /// Lines for the top of each file: what was chosen, under which time model, and why.
  std::vector<std::string> comments;
};

/// What makes `s.stage_layers` unfit to be the stages of `s`, one sentence each: a count other
/// than pp x stages_per_rank, a stage with no layer, a letter other than E, t and L, an embedding
/// that is not the first layer of the first stage or a head that is not the last of the last, or
/// a number of blocks other than `s.blocks` (when known). Empty when they are fit, or absent.
std::vector<std::string> stage_layers_problems(const RunSettings& s);

/// The data sharding that acts: `s.sharding`, or None with a single replica (nothing to shard).
DataSharding effective_sharding(const RunSettings& s);

/// The settings of a tuned run: `model`'s shape and recompute, its layers in `partition`'s stages,
/// the `layout` over `gpus` GPUs, and `trial`'s schedule (family, stages per rank, microbatches
/// and their size, V placement when `v_placement`) written to `schedule_csv`, for a step of
/// `global_batch` samples. FSDP under a pipeline keeps its gathered weights for the step, as the
/// layout search prices it (reshard_after_forward false); without one it reshards.
RunSettings run_settings_of(const NetworkModel& model, const Partition& partition, const ParallelLayout& layout,
                            std::uint32_t gpus, const TuneTrial& trial, bool v_placement, std::string schedule_csv,
                            std::uint64_t global_batch);

}  // namespace ppsched
