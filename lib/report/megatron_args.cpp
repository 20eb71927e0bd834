#include "report/megatron_args.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "ir/user_error.hpp"
#include "report/shell_text.hpp"

namespace ppsched {

namespace {

// A stage as Megatron's layout grammar writes it, a run of three blocks or more as t*N.
std::string stage_text(const std::string& stage) {
  std::string out;
  for (std::size_t i = 0; i < stage.size();) {
    std::size_t run = 1;
    while (i + run < stage.size() && stage[i + run] == stage[i]) ++run;
    out += (stage[i] == 't' && run >= 3) ? fmt::format("t*{}", run) : stage.substr(i, run);
    i += run;
  }
  return out;
}

// Megatron's split without options: num_layers / pp blocks per rank, E on the first, L on the last.
std::vector<std::string> default_split(const RunSettings& s) {
  std::vector<std::string> out(s.pp);
  for (std::uint32_t r = 0; r < s.pp; ++r) {
    if (r == 0) out[r] += 'E';
    out[r].append(s.blocks / s.pp, 't');
    if (r + 1 == s.pp) out[r] += 'L';
  }
  return out;
}

void add(std::vector<std::string>& args, std::string_view option, std::uint64_t value) {
  args.emplace_back(option);
  args.push_back(std::to_string(value));
}

void add_sharding(std::vector<std::string>& args, DataSharding sharding) {
  if (sharding == DataSharding::None) return;
  // Megatron-FSDP (version 1, the default) runs on the distributed optimizer and turns it on
  // itself, with a warning; saying so spares the warning.
  args.emplace_back("--use-distributed-optimizer");
  if (sharding == DataSharding::Optimizer) return;
  args.insert(args.end(), {"--use-megatron-fsdp", "--data-parallel-sharding-strategy",
                           sharding == DataSharding::Gradients ? "optim_grads" : "optim_grads_params",
                           // validate_args: Megatron-FSDP checkpoints only in this format
                           "--ckpt-format", "fsdp_dtensor"});
}

}  // namespace

std::string megatron_layout(const RunSettings& s) {
  if (s.stage_layers.empty()) return "";
  if (s.stages_per_rank == 1 && s.pp > 0 && s.blocks % s.pp == 0 && s.stage_layers == default_split(s)) return "";
  std::string out;
  for (const std::string& stage : s.stage_layers) {
    if (!out.empty()) out += '|';
    out += stage_text(stage);
  }
  return out;
}

std::vector<std::string> megatron_args(const RunSettings& s) {
  if (const std::vector<std::string> why = megatron_violations(s); !why.empty())
    throw UserError(fmt::format("Megatron-LM ({}) cannot run these settings: {}", kMegatronCommit.substr(0, 8),
                                fmt::join(why, "; ")));
  std::vector<std::string> a;
  add(a, "--num-layers", s.blocks);
  add(a, "--hidden-size", s.hidden);
  add(a, "--ffn-hidden-size", s.ffn_hidden);
  add(a, "--num-attention-heads", s.heads);
  if (s.kv_heads > 0 && s.kv_heads < s.heads) {
    a.emplace_back("--group-query-attention");
    add(a, "--num-query-groups", s.kv_heads);
  }
  if (s.swiglu) a.emplace_back("--swiglu");
  if (!s.tied_embeddings) a.emplace_back("--untie-embeddings-and-output-weights");
  add(a, "--seq-length", s.sequence_length);
  add(a, "--max-position-embeddings", s.sequence_length);
  if (s.experts > 0) {
    add(a, "--num-experts", s.experts);
    add(a, "--moe-router-topk", s.top_k);
    if (s.expert_ffn_hidden > 0) add(a, "--moe-ffn-hidden-size", s.expert_ffn_hidden);
    add(a, "--expert-model-parallel-size", s.ep);
    // ppsched's experts are whole on each rank, expert parallel within dp x tp (torchtitan's
    // model); Megatron would otherwise split them by tp as well.
    if (s.tp > 1) add(a, "--expert-tensor-parallel-size", 1);
  }
  add(a, "--tensor-model-parallel-size", s.tp);
  if (s.tp > 1 && s.sequence_parallel) a.emplace_back("--sequence-parallel");
  add(a, "--pipeline-model-parallel-size", s.pp);
  if (std::string layout = megatron_layout(s); !layout.empty()) {
    a.emplace_back("--pipeline-model-parallel-layout");
    a.push_back(std::move(layout));
  }
  add(a, "--micro-batch-size", s.microbatch_size);
  add(a, "--global-batch-size", s.global_batch);
  a.emplace_back("--bf16");
  add_sharding(a, effective_sharding(s));
  if (s.recompute == RecomputeSetting::Selective) a.insert(a.end(), {"--recompute-granularity", "selective"});
  // Full recompute of every block: uniform groups of one layer, each recomputed whole.
  if (s.recompute == RecomputeSetting::Full)
    a.insert(a.end(),
             {"--recompute-granularity", "full", "--recompute-method", "uniform", "--recompute-num-layers", "1"});
  return a;
}

std::string megatron_script(const RunSettings& s) {
  std::vector<std::string> command = {"pretrain_gpt.py"};
  const std::vector<std::string> args = megatron_args(s);
  command.insert(command.end(), args.begin(), args.end());
  std::string out = fmt::format(
      "#!/bin/sh\n"
      "# Written by ppsched tune --emit-best: a Megatron-LM run (Megatron-LM {}), from its checkout.\n"
      "# TORCHRUN_ARGS holds torchrun's options for your machines ({} GPUs in all), split at blanks,\n"
      "# e.g. '--nnodes 8 --nproc_per_node 8 ...'; the data, tokenizer and optimizer arguments go\n"
      "# after this script's name.\n",
      kMegatronCommit.substr(0, 8), s.gpus);
  for (const std::string& c : s.comments) out += shell_comment(c);
  if (!s.model_name.empty()) out += shell_comment("model: " + s.model_name);
  for (const std::string& n : megatron_notes(s)) out += shell_comment("note: " + n);
  return out + "torchrun $TORCHRUN_ARGS " + shell_command(command) + " \"$@\"\n";
}

}  // namespace ppsched
