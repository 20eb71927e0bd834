// Rules about communication: SEND/RECV pairing and order, and what each file format may hold.
#include <fmt/format.h>

#include "check/check_support.hpp"
#include "check/rules_impl.hpp"

namespace ppsched::check {

namespace {

// The other half of a SEND or RECV, as (kind, stage).
std::pair<ActionKind, std::int64_t> partner(const Action& a) {
  switch (a.kind) {
    case ActionKind::SendF:
      return {ActionKind::RecvF, std::int64_t{a.stage} + 1};
    case ActionKind::RecvF:
      return {ActionKind::SendF, std::int64_t{a.stage} - 1};
    case ActionKind::SendB:
      return {ActionKind::RecvB, std::int64_t{a.stage} - 1};
    case ActionKind::RecvB:
      return {ActionKind::SendB, std::int64_t{a.stage} + 1};
    default:
      return {ActionKind::Idle, -1};
  }
}

// Whether the index alone shows that every SEND (sends) or RECV (!sends) has its partner: a walk
// over the stage x microbatch grid, which is far smaller than the schedule. False when it cannot
// tell (a sparse index, an action beyond the pipeline) or when some partner is missing.
bool all_matched(const ActionIndex& idx, bool sends) {
  if (!idx.dense() || idx.any_stage_beyond() || idx.any_microbatch_beyond()) return false;
  const ActionKind mine[2] = {sends ? ActionKind::SendF : ActionKind::RecvF,
                              sends ? ActionKind::SendB : ActionKind::RecvB};
  for (std::uint32_t st = 0; st < idx.stages(); ++st) {
    for (ActionKind k : mine) {
      if ((idx.stage_kinds(st) & (1u << static_cast<unsigned>(k))) == 0) continue;
      auto [other, peer] = partner(Action::make(k, static_cast<std::uint16_t>(st), 0));
      for (std::uint32_t m = 0; m < idx.microbatches(); ++m) {
        if (idx.count(k, st, m) == 0) continue;
        if (peer < 0 || peer >= idx.stages() || idx.count(other, static_cast<std::uint32_t>(peer), m) == 0)
          return false;
      }
    }
  }
  return true;
}

void unmatched(const CheckContext& ctx, DiagnosticSink& sink, bool sends) {
  const ActionIndex& idx = index_of(ctx);
  const std::uint64_t mine = sends ? idx.kind_count(ActionKind::SendF) + idx.kind_count(ActionKind::SendB)
                                   : idx.kind_count(ActionKind::RecvF) + idx.kind_count(ActionKind::RecvB);
  if (mine == 0 || all_matched(idx, sends)) return;
  for_each_leaf(*ctx.schedule, [&](std::size_t r, std::size_t i, const Action& a) {
    bool is_send = a.kind == ActionKind::SendF || a.kind == ActionKind::SendB;
    bool is_recv = a.kind == ActionKind::RecvF || a.kind == ActionKind::RecvB;
    if (!(sends ? is_send : is_recv) || !a.has_microbatch()) return;
    auto [kind, stage] = partner(a);
    bool found =
        stage >= 0 && stage < ctx.stages && idx.count(kind, static_cast<std::uint32_t>(stage), a.microbatch()) > 0;
    if (found) return;
    std::string other = fmt::format("{}{}{}", stage, kind_name(kind), a.microbatch());
    std::string where = stage >= 0 && stage < static_cast<std::int64_t>(ctx.stage_to_rank.size())
                            ? fmt::format(" on rank {}", ctx.stage_to_rank[static_cast<std::size_t>(stage)])
                            : std::string();
    report(ctx, sink, sends ? "send-without-recv" : "recv-without-send", r, i,
           fmt::format("{} has no matching {}{}: the {} would wait forever", text(ctx, a), other, where,
                       sends ? "transfer" : "receive"));
  });
}

}  // namespace

void send_without_recv(const CheckContext& ctx, DiagnosticSink& sink) { unmatched(ctx, sink, true); }
void recv_without_send(const CheckContext& ctx, DiagnosticSink& sink) { unmatched(ctx, sink, false); }

// Whether the index alone shows that no SEND comes before the compute that produces its data:
// with each (kind, stage, microbatch) once and each stage on one rank, a SEND and its producer
// are on the same rank, and their ordinals compare their steps. False when it cannot tell.
bool all_sent_after_compute(const ActionIndex& idx) {
  if (!idx.dense() || idx.any_repeat() || idx.any_stage_on_two_ranks() || idx.any_stage_beyond()) return false;
  constexpr std::uint32_t kSendF = 1u << static_cast<unsigned>(ActionKind::SendF);
  constexpr std::uint32_t kSendB = 1u << static_cast<unsigned>(ActionKind::SendB);
  for (std::uint32_t st = 0; st < idx.stages(); ++st) {
    const std::uint32_t kinds = idx.stage_kinds(st);
    if ((kinds & (kSendF | kSendB)) == 0) continue;
    for (std::uint32_t m = 0; m < idx.microbatches(); ++m) {
      if (kinds & kSendF) {
        const std::uint32_t send = idx.first(ActionKind::SendF, st, m), f = idx.first(ActionKind::F, st, m);
        if (send != ActionIndex::kNone && f != ActionIndex::kNone && f > send) return false;
      }
      if (kinds & kSendB) {
        const std::uint32_t send = idx.first(ActionKind::SendB, st, m);
        const std::uint32_t produced = std::min(idx.first(ActionKind::I, st, m), idx.first(ActionKind::B, st, m));
        if (send != ActionIndex::kNone && produced != ActionIndex::kNone && produced > send) return false;
      }
    }
  }
  return true;
}

void send_before_compute(const CheckContext& ctx, DiagnosticSink& sink) {
  const ActionIndex& idx = index_of(ctx);
  if (idx.kind_count(ActionKind::SendF) + idx.kind_count(ActionKind::SendB) == 0 || all_sent_after_compute(idx)) return;
  for_each_leaf(*ctx.schedule, [&](std::size_t r, std::size_t i, const Action& a) {
    if ((a.kind != ActionKind::SendF && a.kind != ActionKind::SendB) || !a.has_microbatch()) return;
    std::uint32_t produced = ActionIndex::kNone;
    if (a.kind == ActionKind::SendF) {
      produced = idx.first(ActionKind::F, a.stage, a.microbatch());
    } else {
      produced = std::min(idx.first(ActionKind::I, a.stage, a.microbatch()),
                          idx.first(ActionKind::B, a.stage, a.microbatch()));
    }
    if (!idx.later_on_rank(produced, r, i)) return;  // (none at all: missing-forward/backward says it)
    auto [pr, ps] = idx.position(produced);
    report(ctx, sink, "send-before-compute", r, i,
           fmt::format("{} sends data its rank has not computed yet", text(ctx, a)),
           {note_at(ctx, pr, ps, "it is computed here")});
  });
}

void comm_in_compute_only(const CheckContext& ctx, DiagnosticSink& sink) {
  if (!ctx.expect_compute_only) return;
  const Schedule& s = *ctx.schedule;
  for (std::size_t r = 0; r < s.ranks.size(); ++r)
    for (std::size_t i = 0; i < s.ranks[r].actions.size(); ++i) {
      const Action& a = s.ranks[r].actions[i];
      if (!a.is_idle() && !is_compute(a.kind))
        report(
            ctx, sink, "comm-in-compute-only", r, i,
            fmt::format("{} is not a compute action, and this schedule is expected to be compute_only", text(ctx, a)));
    }
}

void idle_in_compute_comms(const CheckContext& ctx, DiagnosticSink& sink) {
  if (!ctx.has_comms) return;
  const Schedule& s = *ctx.schedule;
  for (std::size_t r = 0; r < s.ranks.size(); ++r)
    for (std::size_t i = 0; i < s.ranks[r].actions.size(); ++i)
      if (s.ranks[r].actions[i].is_idle())
        report(ctx, sink, "idle-in-compute-comms", r, i,
               "idle cell in a schedule with communication (compute_comms): PyTorch's runtime asserts on it");
}

}  // namespace ppsched::check
