// A tuned run (report/run_settings.hpp) as Megatron-LM's command-line arguments, pinned at
// commit d98e8a64 (2026-08-22): the model's shape, the parallel layout, the batch, the data
// sharding and the recompute policy, for pretrain_gpt.py. A sample (Llama-3-70B-like, 8 x 8 x 2):
//
//   --num-layers 80 --hidden-size 8192 ... --tensor-model-parallel-size 8 --sequence-parallel
//   --pipeline-model-parallel-size 8 --pipeline-model-parallel-layout 'Et*4|t*5|...|t*6L'
//   --micro-batch-size 1 --global-batch-size 32 --bf16 --use-distributed-optimizer
//   --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params --ckpt-format fsdp_dtensor
//
// The layout lists the stages in Megatron's virtual order (stage vpp_rank x pp + pp_rank), which
// is ppsched's stage order; it is left out when it is Megatron's own even split. ZeRO-1 is the
// distributed optimizer; ZeRO-2 and ZeRO-3 are Megatron-FSDP (optim_grads, optim_grads_params),
// which Megatron allows with pipeline parallelism, unlike --use-torch-fsdp2.
//
// What Megatron cannot run as given is refused (megatron_violations); what it runs differently
// from what ppsched timed is said in megatron_notes, never left silent: Megatron's schedules are
// 1F1B and looped interleaved 1F1B, with no zero-bubble, V-shaped or DualPipeV schedule.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/run_settings.hpp"

namespace ppsched {

/// The Megatron-LM commit whose options and rules these faces follow.
inline constexpr std::string_view kMegatronCommit = "d98e8a64ddf34856e74b24714e3bedb2f5a39553";

/// Why Megatron-LM at kMegatronCommit would reject the arguments of `s` or could not express
/// `s`, one sentence each (its validate_args and TransformerConfig rules: GPUs = pp x tp x dp,
/// heads a multiple of tp, query groups a multiple or divisor of tp, hidden a multiple of heads,
/// the global batch a multiple of micro batch x dp and giving the schedule's microbatch count, a
/// layout with E first, L last and every block, experts a multiple of ep, ...). Empty: it runs.
std::vector<std::string> megatron_violations(const RunSettings& s);

/// What Megatron runs differently from what ppsched timed, or what the user must still do, one
/// line each: a schedule Megatron does not have (V placement, zero bubble, the automatic
/// schedule), Megatron-FSDP's requirements, the MoE layers' frequency, the arguments not given.
std::vector<std::string> megatron_notes(const RunSettings& s);

/// The value of --pipeline-model-parallel-layout: the stages joined by '|', runs of blocks as
/// t*N. Empty when Megatron's default split is the same (one stage per rank, blocks divided
/// evenly, E on the first and L on the last) or the stage layers are not known.
std::string megatron_layout(const RunSettings& s);

/// The arguments, one per element. Throws UserError listing megatron_violations(s) if any.
std::vector<std::string> megatron_args(const RunSettings& s);

/// A sh script for Megatron-LM's checkout: comments and notes, then
/// `torchrun $TORCHRUN_ARGS pretrain_gpt.py <arguments> "$@"`. Throws as megatron_args does.
std::string megatron_script(const RunSettings& s);

}  // namespace ppsched
