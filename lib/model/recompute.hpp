// Recompute (activation checkpointing): what a checkpointed stage costs and holds.
//
// PyTorch's non-reentrant checkpoint (what torchtitan's full and selective AC use) drops a
// region's activations after its forward and re-runs the region's forward the first time a
// backward pass unpacks one of them. That "first time" is per autograd graph task, so the count
// of recomputes depends on how many separate backward calls reach the region:
//   - B (stage_backward): one torch.autograd.backward call: the region runs once more.
//   - I (stage_backward_input): one autograd.grad call for the stage inputs: once. On stage 0,
//     whose inputs (token ids) do not require grad, PyTorch skips it: no recompute.
//   - W (stage_backward_weight): one autograd.grad call per parameter group, each a graph task
//     of its own, each recomputing the region its nodes sit in: `weight_groups` times (9 for a
//     torchtitan Llama block: wq, wk, wv, wo, w1, w2, w3 and the two norms). On stage 0, W runs
//     the whole backward in one stage_backward call: once.
// So a split backward recomputes a checkpointed stage 1 + weight_groups times per microbatch
// where B recomputes it once; that is what made Interleaved Zero Bubble lose to Interleaved
// 1F1B with AC and win without it (pytorch/torchtitan#773).
//
// Memory: a checkpointed forward keeps only `kept_memory_bytes` (the region inputs; for
// selective AC also the outputs its policy saves). I recomputes the activations and unpacks
// those for the input gradient; the ones W reads (M_W) stay alive with the graph until W.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/action.hpp"

namespace ppsched {

struct CostModel;
struct StageSpec;

struct Recompute {
  enum class Mode : std::uint8_t { None, Full, Selective };
  Mode mode = Mode::None;
  /// Time of one recompute as a fraction of the stage's forward: 1 for full AC (the whole
  /// forward again); for selective AC, the share of the forward its policy does not save.
  double cost = 1.0;
  /// What a forward leaves held until its backward; < 0: the stage's activation_bytes (one
  /// checkpointed region per stage, keeping an input the size of what the stage passes on).
  double kept_memory_bytes = -1;
  /// What I leaves held for W; < 0: kept_memory_bytes + M_W (the region inputs W's recompute
  /// reads, and what W itself reads), at most the stage's uncheckpointed M_B. A model's stages
  /// state it, being partly checkpointed (blocks) and partly not (the head).
  double held_for_weight_bytes = -1;
  /// Parameter groups per checkpointed region: how many times one W recomputes it.
  std::uint32_t weight_groups = 1;

  bool active() const { return mode != Mode::None; }
};

/// "none", "full", "selective".
std::string_view recompute_mode_name(Recompute::Mode mode);

/// How many times one action of `kind` recomputes a checkpointed stage (0 when it is not
/// checkpointed, or for kinds that run no backward): see the top of this file.
std::uint32_t recomputes_of(const Recompute& r, bool first_stage, ActionKind kind);

/// What the stages' recompute is, for a report's time model: "" when no stage is checkpointed,
/// else e.g. "recompute: full on stages 0-15 (a re-run costs 1 x F; per microbatch B re-runs it
/// once, I once, W 9 times)", a clause per run of consecutive stages alike.
std::string recompute_description(const std::vector<StageSpec>& spec);

/// `costs` with each checkpointed stage's B, I and W charged their recomputes, each
/// `cost` x the stage's forward. The one place recompute time enters the cost model: every
/// command that reads a stage spec times its schedules with these costs. Costs measured with
/// checkpointing on already hold it; give such a table without "recompute" in the stage spec.
CostModel with_recompute(const CostModel& costs, const std::vector<StageSpec>& spec);

}  // namespace ppsched
