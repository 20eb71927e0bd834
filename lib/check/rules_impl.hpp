// The rule functions of the table in check.cpp, and the index they share. Internal.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "check/check.hpp"
#include "passes/key_table.hpp"
#include "sim/activation_liveness.hpp"
#include "sim/analysis.hpp"
#include "sim/leaf_census.hpp"
#include "sim/timed.hpp"

namespace ppsched::check {

/// First occurrence and count of each (kind, stage, microbatch) over the whole schedule, for the
/// kinds that carry a microbatch. Positions are ordinals: rank_begin[rank] + step.
class ActionIndex {
 public:
  static constexpr std::uint32_t kNone = 0xFFFFFFFF;
  explicit ActionIndex(const CheckContext& ctx);

  std::uint32_t first(ActionKind k, std::uint32_t stage, std::uint32_t mb) const {
    auto i = slot(k, stage, mb);
    return i == kNoSlot ? kNone : first_.get(i);
  }
  std::uint32_t count(ActionKind k, std::uint32_t stage, std::uint32_t mb) const {
    auto i = slot(k, stage, mb);
    return i == kNoSlot ? 0 : count_.get(i);
  }
  std::uint32_t ordinal(std::size_t rank, std::size_t step) const {
    return rank_begin_[rank] + static_cast<std::uint32_t>(step);
  }
  std::pair<std::size_t, std::size_t> position(std::uint32_t ordinal) const;
  /// Whether action `ordinal` is on rank `rank` after its step `step` (kNone: no): the
  /// ordinals of a rank are contiguous, so no search for its position is needed.
  bool later_on_rank(std::uint32_t ordinal, std::size_t rank, std::size_t step) const {
    return ordinal != kNone && ordinal > this->ordinal(rank, step) && ordinal < rank_begin_[rank + 1];
  }

  // Facts from the one pass that built the index, which let a rule prove in O(1) that it has
  // nothing to say, and skip its own pass over every action (exact: a rule that may have
  // something to say still looks at every action).
  /// How many leaves (container sub-actions included) have this kind.
  std::uint64_t kind_count(ActionKind k) const { return kind_count_[static_cast<std::size_t>(k)]; }
  /// Whether some indexed (kind, stage, microbatch) occurs twice or more.
  bool any_repeat() const { return any_repeat_; }
  /// Whether some leaf names a stage, or a microbatch, beyond the pipeline's (those are never
  /// indexed, so a rule that relies on the index alone must then look at every action).
  bool any_stage_beyond() const { return any_stage_beyond_; }
  bool any_microbatch_beyond() const { return any_mb_beyond_; }
  /// The rank where a stage's first action is (kNone: none), and whether another rank has one.
  std::uint32_t stage_rank(std::uint32_t stage) const {
    return stage < stage_rank_.size() ? stage_rank_[stage] : kNone;
  }
  bool any_stage_on_two_ranks() const { return any_stage_on_two_ranks_; }
  /// Which kinds occur on a stage, as bits 1 << ActionKind.
  std::uint32_t stage_kinds(std::uint32_t stage) const { return stage < stage_kinds_.size() ? stage_kinds_[stage] : 0; }
  /// Whether the tables are dense (every (kind, stage, microbatch) has a cell): then a rule can
  /// walk the stage x microbatch grid instead of the actions.
  bool dense() const { return first_.dense() && count_.dense(); }  // both are, or neither
  std::uint32_t stages() const { return stages_; }
  std::uint32_t microbatches() const { return microbatches_; }

 private:
  static constexpr std::uint64_t kNoSlot = ~std::uint64_t{0};
  static constexpr std::uint32_t kKinds = 8;  ///< F, B, I, W, SEND_F, RECV_F, SEND_B, RECV_B
  // An indexed kind's slot, by ActionKind; 0xFF: not indexed. A table, and slot() inline, because
  // every rule looks actions up here, once or twice per action: a call and a switch per lookup
  // would be paid in every rule's pass (docs/bench.md, "Validation").
  static constexpr std::array<std::uint8_t, kActionKindCount> kKindSlot = [] {
    std::array<std::uint8_t, kActionKindCount> t{};
    t.fill(0xFF);
    const ActionKind order[kKinds] = {ActionKind::F,     ActionKind::B,     ActionKind::I,     ActionKind::W,
                                      ActionKind::SendF, ActionKind::RecvF, ActionKind::SendB, ActionKind::RecvB};
    for (std::uint32_t i = 0; i < kKinds; ++i) t[static_cast<std::size_t>(order[i])] = static_cast<std::uint8_t>(i);
    return t;
  }();
  std::uint64_t slot(ActionKind k, std::uint32_t stage, std::uint32_t mb) const {
    const std::uint32_t ks = kKindSlot[static_cast<std::size_t>(k)];
    if (ks == 0xFF || stage >= stages_ || mb >= microbatches_) return kNoSlot;
    return first_.key(ks, stage, mb);
  }
  std::uint32_t stages_, microbatches_;
  // Two tables over the same grid, so both are dense or both sparse, and share their keys: 5
  // bytes a cell, where one table of (first, count) would pad them to 8.
  KeyTable<std::uint32_t, kKinds> first_;
  KeyTable<std::uint8_t, kKinds> count_;  // saturates at 255
  std::vector<std::uint32_t> rank_begin_;
  std::array<std::uint64_t, kActionKindCount> kind_count_{};
  bool any_repeat_ = false, any_stage_beyond_ = false, any_mb_beyond_ = false, any_stage_on_two_ranks_ = false;
  std::vector<std::uint32_t> stage_rank_;  ///< per stage of the pipeline
  std::vector<std::uint32_t> stage_kinds_;
};

/// The index of the run, built on first use (a rule that asks for it; run_checks skips those the
/// one-pass proof speaks for, so a clean file never builds it).
const ActionIndex& index_of(const CheckContext& ctx);

/// The schedule run through the timed simulator, once per check run: the deadlock rule and the
/// thresholds read the same result, so they and `ppsched simulate` always agree.
struct Simulation {
  bool finished = false;
  SimAnalysis analysis;                     ///< when finished: makespan, bubbles, peak memory
  std::vector<TimedDeadlock::Stuck> stuck;  ///< when not
};
/// The memory model the stage spec implies (unit sizes without one).
MemoryModel memory_model(const CheckContext& ctx);
/// The costs the rules time with: --costs (else unit costs for the pipeline), with the stage
/// spec's recompute charged.
CostModel cost_model(const CheckContext& ctx);
const Simulation& simulation_of(const CheckContext& ctx);
/// Whether a threshold rule (max-bubble, max-memory) reads simulation_of under `ctx`'s settings.
bool thresholds_simulate(const CheckContext& ctx);

/// PyTorch's activation slots per rank at ctx.memory_liveness's granularity, once per check run
/// (max-memory under --memory-model pytorch-liveness): the counts, or PyTorch's error for an
/// order it cannot analyse. Needs no simulation: the count depends on each rank's order only.
struct Liveness {
  std::optional<ActivationLiveness> counts;
  std::optional<LivenessError> error;  ///< when not counted
};
const Liveness& liveness_of(const CheckContext& ctx);

/// What one pass over the schedule proves (structure_proof.cpp): that no structural rule
/// (structural_rule_ids) has anything to say; with that, that no rule of send/recv pairing and
/// order has either; and which kinds the schedule holds (bits 1 << ActionKind, container
/// sub-actions included; known only when the structure is proven). False where it cannot tell:
/// then the rules run and say what, if anything, is wrong.
struct CleanProof {
  bool structural = false;
  bool comms = false;
  std::uint32_t kinds = 0;
  /// When both hold and every leaf that names a microbatch is one of the grid's kinds: what the
  /// proof saw, for the simulation to skip its own pass (sim/leaf_census.hpp).
  std::shared_ptr<const LeafCensus> census;
};
CleanProof prove_clean(const CheckContext& ctx);
bool provably_structurally_clean(const CheckContext& ctx);
/// Whether `proof` shows that `rule` has nothing to say (Rule::proven_by).
bool proven_silent(const CleanProof& proof, const Rule& rule);

void rank_count(const CheckContext&, DiagnosticSink&);
void stage_out_of_range(const CheckContext&, DiagnosticSink&);
void microbatch_out_of_range(const CheckContext&, DiagnosticSink&);
void stage_on_two_ranks(const CheckContext&, DiagnosticSink&);
void stage_on_wrong_rank(const CheckContext&, DiagnosticSink&);
void duplicate_action(const CheckContext&, DiagnosticSink&);
void missing_forward(const CheckContext&, DiagnosticSink&);
void missing_backward(const CheckContext&, DiagnosticSink&);
void backward_before_forward(const CheckContext&, DiagnosticSink&);
void weight_before_input_grad(const CheckContext&, DiagnosticSink&);
void full_and_split_backward(const CheckContext&, DiagnosticSink&);
void send_without_recv(const CheckContext&, DiagnosticSink&);
void recv_without_send(const CheckContext&, DiagnosticSink&);
void send_before_compute(const CheckContext&, DiagnosticSink&);
void comm_in_compute_only(const CheckContext&, DiagnosticSink&);
void idle_in_compute_comms(const CheckContext&, DiagnosticSink&);
void deadlock(const CheckContext&, DiagnosticSink&);
void input_grad_without_requires_grad(const CheckContext&, DiagnosticSink&);
void input_grad_with_non_tensor_input(const CheckContext&, DiagnosticSink&);
void first_stage_input_grad(const CheckContext&, DiagnosticSink&);
void split_backward_recompute(const CheckContext&, DiagnosticSink&);
void input_weight_count(const CheckContext&, DiagnosticSink&);
void comm_between_colocated(const CheckContext&, DiagnosticSink&);
void unshard_reshard(const CheckContext&, DiagnosticSink&);
void reduce_grad(const CheckContext&, DiagnosticSink&);
void max_bubble(const CheckContext&, DiagnosticSink&);
void max_memory(const CheckContext&, DiagnosticSink&);

}  // namespace ppsched::check
