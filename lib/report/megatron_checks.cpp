// megatron_violations and megatron_notes (report/megatron_args.hpp): Megatron-LM's rules, as its
// validate_args (megatron/training/arguments.py) and TransformerConfig.__post_init__ state them
// at d98e8a64, checked on the settings before any argument is written.
#include <fmt/format.h>

#include <cstdint>

#include "report/megatron_args.hpp"
#include "synth/synth.hpp"

namespace ppsched {

namespace {

void check_layout(const RunSettings& s, std::vector<std::string>& why) {
  if (s.stages_per_rank > 1 && s.pp < 2)
    why.push_back("interleaved stages need a pipeline of 2 ranks or more (overlapped p2p communication)");
  if (s.stage_layers.empty()) {
    // Megatron's own split then: blocks / pp per rank, no interleaving.
    if (s.stages_per_rank != 1 || (s.pp > 0 && s.blocks % s.pp != 0))
      why.push_back(
          fmt::format("without the layers of each stage Megatron splits {} blocks evenly over {} ranks, "
                      "one stage each, which these settings are not: tune with a model file",
                      s.blocks, s.pp));
    return;
  }
  for (const std::string& p : stage_layers_problems(s)) why.push_back(p);
}

void check_experts(const RunSettings& s, std::vector<std::string>& why) {
  if (s.experts == 0) {
    if (s.ep > 1) why.push_back("expert parallel needs --num-experts, and the model has no experts");
    return;
  }
  if (s.ep > 0 && s.experts % s.ep != 0)
    why.push_back(fmt::format("{} experts are not a multiple of expert parallel {}", s.experts, s.ep));
  // With --expert-tensor-parallel-size 1 the expert grid is ep x (dp x tp / ep) per stage.
  const std::uint64_t ranks = std::uint64_t{s.dp} * s.tp;
  if (s.ep > 0 && ranks % s.ep != 0)
    why.push_back(fmt::format("expert parallel {} does not divide dp x tp = {}", s.ep, ranks));
  if (s.top_k == 0 || s.top_k > s.experts)
    why.push_back(fmt::format("the router's top-k {} is not between 1 and the {} experts", s.top_k, s.experts));
}

}  // namespace

std::vector<std::string> megatron_violations(const RunSettings& s) {
  std::vector<std::string> why;
  if (s.blocks == 0 || s.hidden == 0 || s.ffn_hidden == 0 || s.heads == 0 || s.sequence_length == 0) {
    why.push_back(
        "Megatron needs the model's shape (layers, hidden and FFN sizes, heads, sequence length), which "
        "these settings do not have: tune with a model file");
    return why;
  }
  if (s.pp == 0 || s.tp == 0 || s.dp == 0 || s.ep == 0 || s.stages_per_rank == 0) {
    why.push_back("a parallel degree or the stages per rank is 0");
    return why;
  }
  if (std::uint64_t{s.pp} * s.tp * s.dp != s.gpus)
    why.push_back(fmt::format("pp x tp x dp = {} x {} x {} is not the run's {} GPUs", s.pp, s.tp, s.dp, s.gpus));
  if (s.heads % s.tp != 0)
    why.push_back(fmt::format("{} attention heads are not a multiple of tensor parallel {}", s.heads, s.tp));
  if (s.hidden % s.heads != 0)
    why.push_back(fmt::format("the hidden size {} is not a multiple of the {} heads", s.hidden, s.heads));
  const std::uint64_t groups = s.kv_heads > 0 && s.kv_heads < s.heads ? s.kv_heads : s.heads;
  if (groups % s.tp != 0 && s.tp % groups != 0)
    why.push_back(
        fmt::format("{} query groups are neither a multiple nor a divisor of tensor parallel {}", groups, s.tp));
  check_layout(s, why);
  check_experts(s, why);
  const std::uint64_t per_microbatch = std::uint64_t{s.microbatch_size} * s.dp;
  if (s.microbatch_size == 0 || s.global_batch == 0) {
    why.push_back("a micro batch or global batch of size 0");
  } else if (s.global_batch % per_microbatch != 0) {
    why.push_back(
        fmt::format("the global batch {} is not a multiple of micro batch x dp = {}", s.global_batch, per_microbatch));
  } else if (s.global_batch / per_microbatch != s.microbatches) {
    // Megatron has no accumulation outside the pipeline: every microbatch of the step goes through it.
    why.push_back(
        fmt::format("Megatron would run global batch / (micro batch x dp) = {} microbatches through the "
                    "pipeline, the schedule {}",
                    s.global_batch / per_microbatch, s.microbatches));
  }
  return why;
}

std::vector<std::string> megatron_notes(const RunSettings& s) {
  std::vector<std::string> out;
  const Family* family = find_family(s.family);
  const std::string_view name = family ? family->name : std::string_view(s.family);
  const bool megatrons = !s.v_placement && ((name == "1F1B" && s.stages_per_rank == 1) ||
                                            (name == "Interleaved1F1B" && s.stages_per_rank > 1));
  if (s.pp > 1 && !megatrons)
    out.push_back(
        fmt::format("Megatron-LM's schedules are 1F1B and interleaved (looped) 1F1B; it has no zero-bubble, "
                    "V-shaped or DualPipeV schedule and reads no schedule file. It runs {} 1F1B on this "
                    "layout, not the order of {} that ppsched timed",
                    s.stages_per_rank > 1 ? "interleaved" : "plain", s.family.empty() ? "?" : s.family));
  if (s.v_placement)
    out.push_back(
        "the V placement is lost too: Megatron puts virtual stage s on pipeline rank s mod pp, so the "
        "stages of the layout are looped");
  const DataSharding sharding = effective_sharding(s);
  if (sharding == DataSharding::Gradients || sharding == DataSharding::Full)
    out.push_back(
        "Megatron-FSDP needs CUDA_DEVICE_MAX_CONNECTIONS unset or above 1 and the adam or sgd optimizer, "
        "and saves checkpoints as fsdp_dtensor");
  if (sharding == DataSharding::Full && !s.reshard_after_forward)
    out.push_back(
        "Megatron-FSDP has no setting that keeps parameters gathered from forward to backward (torch "
        "FSDP2's needs pp 1 and ep 1): it gathers them again for the backward");
  if (s.experts > 0)
    out.push_back("every block is an MoE layer unless --moe-layer-freq says which are dense; the settings do not");
  out.push_back(
      fmt::format("not set here: data, tokenizer (vocabulary {}), optimizer, learning rate, iterations, "
                  "and what the settings do not describe (position embedding, normalization, biases)",
                  s.vocab));
  return out;
}

}  // namespace ppsched
