// Rules about what the runtime lowering adds: FSDP UNSHARD/RESHARD, REDUCE_GRAD, and comms where
// none are needed, plus the I/W balance PyTorch's validator counts.
#include <fmt/format.h>

#include <algorithm>

#include "check/check_support.hpp"
#include "check/rules_impl.hpp"

namespace ppsched::check {

namespace {

// Per-stage state that a rule keeps for one rank at a time. A rank touches only its own stages,
// so the state is allocated once for the schedule and only the touched entries are reset between
// ranks: an array per rank would cost ranks x stages (60,000 ranks of one stage each: 14 GB
// allocated and cleared, minutes under ASan).
template <typename T>
class PerRankStages {
 public:
  explicit PerRankStages(std::uint32_t stages) : values_(stages, T{}), touched_(stages, 0) {}
  T& operator[](std::uint32_t stage) {
    if (!touched_[stage]) {
      touched_[stage] = 1;
      order_.push_back(stage);
    }
    return values_[stage];
  }
  /// The stages this rank touched, in increasing order.
  const std::vector<std::uint32_t>& touched() {
    std::sort(order_.begin(), order_.end());
    return order_;
  }
  /// Back to all T{} for the next rank.
  void next_rank() {
    for (std::uint32_t st : order_) {
      values_[st] = T{};
      touched_[st] = 0;
    }
    order_.clear();
  }

 private:
  std::vector<T> values_;
  std::vector<char> touched_;
  std::vector<std::uint32_t> order_;
};

}  // namespace

void input_weight_count(const CheckContext& ctx, DiagnosticSink& sink) {
  const ActionIndex& idx = index_of(ctx);
  // Microbatches with an I (and with a W) per stage, each counted once (at its first action): a
  // walk over the actions, not over the stage x microbatch grid, which a sparse schedule (one
  // action at microbatch 4e9) makes astronomically large.
  if (idx.kind_count(ActionKind::I) + idx.kind_count(ActionKind::W) == 0) return;  // 0 == 0 everywhere
  std::vector<std::uint32_t> with_i(ctx.stages, 0), with_w(ctx.stages, 0);
  for_each_leaf(*ctx.schedule, [&](std::size_t r, std::size_t step, const Action& a) {
    if ((a.kind != ActionKind::I && a.kind != ActionKind::W) || !a.has_microbatch() || a.stage >= ctx.stages) return;
    if (idx.first(a.kind, a.stage, a.microbatch()) != idx.ordinal(r, step)) return;  // counted already
    ++(a.kind == ActionKind::I ? with_i : with_w)[a.stage];
  });
  for (std::uint32_t s = 0; s < ctx.stages && !sink.full(); ++s) {
    const std::uint32_t i = with_i[s], w = with_w[s];
    if (i == w) continue;
    std::size_t rank = s < ctx.stage_to_rank.size() ? ctx.stage_to_rank[s] : 0;
    Diagnostic d;
    d.rule = "input-weight-count";
    d.loc = action_location(ctx, rank, 0);
    d.loc.column = d.loc.line ? 1 : 0;
    d.message = fmt::format("stage {} runs I for {} microbatch(es) but W for {}: every I needs its W", s, i, w);
    sink.report(std::move(d));
  }
}

void comm_between_colocated(const CheckContext& ctx, DiagnosticSink& sink) {
  const ActionIndex& idx = index_of(ctx);
  if (idx.kind_count(ActionKind::SendF) + idx.kind_count(ActionKind::SendB) + idx.kind_count(ActionKind::RecvF) +
          idx.kind_count(ActionKind::RecvB) ==
      0)
    return;
  // From the index: which comm kinds each stage has says which stage pairs they join.
  if (!idx.any_stage_beyond()) {
    auto bit = [](ActionKind k) { return 1u << static_cast<unsigned>(k); };
    const std::size_t placed = ctx.stage_to_rank.size();
    bool none = true;
    for (std::uint32_t st = 0; st < idx.stages() && st < placed; ++st) {
      const std::uint32_t kinds = idx.stage_kinds(st);
      if ((kinds & (bit(ActionKind::SendF) | bit(ActionKind::RecvB))) && st + 1 < placed)
        none &= ctx.stage_to_rank[st] != ctx.stage_to_rank[st + 1];
      if ((kinds & (bit(ActionKind::RecvF) | bit(ActionKind::SendB))) && st > 0)
        none &= ctx.stage_to_rank[st] != ctx.stage_to_rank[st - 1];
    }
    if (none) return;
  }
  for_each_leaf(*ctx.schedule, [&](std::size_t r, std::size_t i, const Action& a) {
    if (!is_send_recv(a.kind) || !a.has_stage()) return;
    std::int64_t peer =
        (a.kind == ActionKind::SendF || a.kind == ActionKind::RecvB) ? a.stage + 1 : std::int64_t{a.stage} - 1;
    if (peer < 0 || peer >= static_cast<std::int64_t>(ctx.stage_to_rank.size()) || a.stage >= ctx.stage_to_rank.size())
      return;
    if (ctx.stage_to_rank[a.stage] == ctx.stage_to_rank[static_cast<std::size_t>(peer)])
      report(ctx, sink, "comm-between-colocated-stages", r, i,
             fmt::format("{} moves data between stages {} and {}, which are both on rank {}: PyTorch passes it "
                         "locally and never posts this",
                         text(ctx, a), a.stage, peer, ctx.stage_to_rank[a.stage]));
  });
}

void unshard_reshard(const CheckContext& ctx, DiagnosticSink& sink) {
  const ActionIndex& idx = index_of(ctx);
  if (idx.kind_count(ActionKind::Unshard) + idx.kind_count(ActionKind::Reshard) == 0) return;
  const Schedule& s = *ctx.schedule;
  bool uses_fsdp = false;
  for (const auto& r : s.ranks)
    for (const Action& a : r.actions) uses_fsdp |= a.kind == ActionKind::Unshard || a.kind == ActionKind::Reshard;
  if (!uses_fsdp) return;  // a schedule without FSDP actions keeps its parameters unsharded
  struct StageState {
    bool unsharded = false;
    std::size_t unshard_at = 0;  ///< the step of the last UNSHARD
  };
  PerRankStages<StageState> stage(ctx.stages);
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    stage.next_rank();
    const auto& program = s.ranks[r].actions;
    for (std::size_t i = 0; i < program.size(); ++i) {
      const Action& a = program[i];
      if (a.is_idle()) continue;
      auto check_compute = [&](const Action& leaf) {
        if (!is_compute(leaf.kind) || !leaf.has_stage() || leaf.stage >= ctx.stages) return;
        if (!stage[leaf.stage].unsharded)
          report(ctx, sink, "unshard-reshard", r, i,
                 fmt::format("{} computes on stage {} while its parameters are resharded: UNSHARD it first",
                             text(ctx, leaf), leaf.stage));
      };
      if (a.is_container()) {
        for (const Action& sub : s.subs(a)) check_compute(sub);
        continue;
      }
      if (!a.has_stage() || a.stage >= ctx.stages) continue;
      if (a.kind == ActionKind::Unshard) {
        StageState& st = stage[a.stage];
        if (st.unsharded)
          report(ctx, sink, "unshard-reshard", r, i,
                 fmt::format("{} unshards a stage that is already unsharded", text(ctx, a)),
                 {note_at(ctx, r, st.unshard_at, "unsharded here")});
        st.unsharded = true;
        st.unshard_at = i;
      } else if (a.kind == ActionKind::Reshard) {
        StageState& st = stage[a.stage];
        if (!st.unsharded)
          report(ctx, sink, "unshard-reshard", r, i,
                 fmt::format("{} reshards a stage that is not unsharded", text(ctx, a)));
        st.unsharded = false;
      } else {
        check_compute(a);
      }
    }
    for (std::uint32_t st : stage.touched())
      if (stage[st].unsharded)
        report(ctx, sink, "unshard-reshard", r, stage[st].unshard_at,
               fmt::format("stage {} is unsharded here and never resharded: its parameters stay gathered", st));
  }
}

void reduce_grad(const CheckContext& ctx, DiagnosticSink& sink) {
  if (index_of(ctx).kind_count(ActionKind::ReduceGrad) == 0) return;
  const Schedule& s = *ctx.schedule;
  // Per stage: backwards that complete a weight gradient (B or W) seen so far on this rank.
  PerRankStages<std::uint32_t> done(ctx.stages);
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    done.next_rank();
    const auto& program = s.ranks[r].actions;
    for (std::size_t i = 0; i < program.size(); ++i) {
      const Action& a = program[i];
      if (a.is_idle()) continue;
      auto count = [&](const Action& leaf) {
        if ((leaf.kind == ActionKind::B || leaf.kind == ActionKind::W) && leaf.has_stage() && leaf.stage < ctx.stages)
          ++done[leaf.stage];
      };
      if (a.is_container()) {
        for (const Action& sub : s.subs(a)) count(sub);
        continue;
      }
      count(a);
      if (a.kind != ActionKind::ReduceGrad || !a.has_stage() || a.stage >= ctx.stages) continue;
      if (done[a.stage] < ctx.microbatches)
        report(ctx, sink, "reduce-grad-misplaced", r, i,
               fmt::format("{} reduces stage {}'s gradients after {} of its {} weight-gradient backwards: the "
                           "rest would be missed",
                           text(ctx, a), a.stage, done[a.stage], ctx.microbatches));
    }
  }
}

}  // namespace ppsched::check
