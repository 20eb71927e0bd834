// Deadlock: the schedule cannot finish. Decided by the timed simulator itself (sim/timed.hpp),
// so the validator and `simulate` always agree; each stuck action is named with what it waits for.
// Under the context's send mode (rendezvous by default): an eager SEND waits for no RECV, so a
// cycle through one is no cycle.
#include <fmt/format.h>

#include <algorithm>

#include "check/check_support.hpp"
#include "check/rules_impl.hpp"
#include "model/recompute.hpp"
#include "sim/aggregate.hpp"
#include "sim/timed.hpp"

namespace ppsched::check {

CostModel cost_model(const CheckContext& ctx) {
  CostModel costs = ctx.costs ? *ctx.costs : CostModel::for_pipeline(ctx.ranks, ctx.stages);
  return ctx.stage_spec ? with_recompute(costs, *ctx.stage_spec) : costs;
}

namespace {
// The comm options the deadlock rule simulates under: the send mode (with the sizes an eager
// threshold compares; no topology, so transfers are free) and the communicator queues.
TimedOptions comm_options(const CheckContext& ctx) {
  TimedOptions opt;
  if (ctx.stage_spec) opt.comm.stages = *ctx.stage_spec;
  opt.send = ctx.send_mode;
  opt.p2p_queues = ctx.p2p_queues;
  return opt;
}
}  // namespace

const Simulation& simulation_of(const CheckContext& ctx) {
  if (!ctx.simulation) {
    auto sim = std::make_shared<Simulation>();
    // One run gives the verdict and, when it finishes, what the thresholds compare: the
    // aggregates run (no Timeline) is cheaper than even the verdict-only find_stuck, and a
    // schedule that cannot finish is run again by it with a Timeline to name the stuck actions.
    TimedOptions opt = comm_options(ctx);
    opt.costs = cost_model(ctx);
    try {
      sim->analysis =
          simulate_aggregates(*ctx.schedule, ctx.stage_to_rank, opt, memory_model(ctx), nullptr, ctx.census.get());
      sim->finished = true;
    } catch (const TimedDeadlock& d) {
      sim->stuck = d.stuck();
    }
    ctx.simulation = std::move(sim);
  }
  return *ctx.simulation;
}

namespace {

// Which in-order queue of its rank an action runs on in the simulator: compute, or a SEND's or
// RECV's communicator queue (sim/p2p_queues.hpp).
struct Queue {
  bool comm = false;
  CommQueueKey key;
  friend bool operator==(const Queue&, const Queue&) = default;
};
Queue queue_of(const CheckContext& ctx, ActionKind kind, std::uint32_t stage, std::uint32_t rank) {
  if (!is_send_recv(kind)) return {};
  return {true, comm_queue_key(ctx.p2p_queues, kind, stage, rank, ctx.stage_to_rank)};
}

// Whether `a` is the action that raises the event `w` waits for (an I wait is met by a B too).
bool raises(const Action& a, const TimedDeadlock::Stuck& w) {
  if (!a.has_stage() || !a.has_microbatch() || a.stage != w.waits_stage || a.microbatch() != w.waits_microbatch)
    return false;
  return a.kind == w.waits_kind || (w.waits_kind == ActionKind::I && a.kind == ActionKind::B);
}

// Whether the schedule finishes with its communicator queues split as `queues`: then the cycle
// runs through a queue that unrelated transfers share. Only asked of a cycle through a comm queue
// (a cheap run without times, on a schedule already known to stick).
bool finishes_with(const CheckContext& ctx, P2pQueues queues) {
  TimedOptions opt = comm_options(ctx);
  opt.p2p_queues = queues;
  return find_stuck(*ctx.schedule, ctx.stage_to_rank, opt).empty();
}

// The note on a cycle through shared communicator queues: the least split that lets the schedule
// finish, or that none does (the order itself is wrong).
std::string shared_queue_note(const CheckContext& ctx) {
  const std::string head = fmt::format(
      "checked under --p2p-queues {}: the cycle runs through a communicator queue that unrelated transfers share",
      p2p_queues_name(ctx.p2p_queues));
  if (ctx.p2p_queues == P2pQueues::PerRank && finishes_with(ctx, P2pQueues::PerDirection))
    return head +
           "; with a communicator for activations and one for gradients (--p2p-queues per-direction) "
           "the schedule finishes";
  if (finishes_with(ctx, P2pQueues::PerEdge))
    return head + "; with a communicator per directed rank pair (--p2p-queues per-edge) the schedule finishes";
  return head + "; it cannot finish with a communicator per directed rank pair either (--p2p-queues per-edge)";
}

// Under an eager send mode a SEND in the chain waits for its RECV only because its message is
// over the threshold: say so, with each such SEND's size, so that the verdict is not read as
// the rendezvous one.
std::string eager_note(const CheckContext& ctx, const std::vector<const TimedDeadlock::Stuck*>& chain,
                       std::size_t from) {
  const Schedule& s = *ctx.schedule;
  const SendMode& mode = ctx.send_mode;
  if (!mode.needs_sizes())
    return "checked under --send-mode eager: no SEND waits for its RECV, and it still cannot finish";
  CommModel sizes;
  if (ctx.stage_spec) sizes.stages = *ctx.stage_spec;
  std::string over;
  for (std::size_t i = from; i < chain.size(); ++i) {
    const Action& a = s.ranks[chain[i]->rank].actions[chain[i]->step];
    if (a.kind != ActionKind::SendF && a.kind != ActionKind::SendB) continue;
    over += fmt::format("{}{} carries {:.0f}", over.empty() ? "" : ", ", text(ctx, a),
                        sizes.message_bytes(a.stage, a.kind == ActionKind::SendF));
  }
  std::string out = fmt::format(
      "checked under --send-mode {}: a SEND waits for its RECV only when its message is over "
      "{:.0f} bytes",
      send_mode_name(mode), mode.eager_max_bytes);
  if (!over.empty()) out += " (" + over + ")";
  return out;
}

}  // namespace

// The wait-for cycle: each stuck head waits for an event that an action of another (or its own)
// rank produces; that rank is itself stuck at the head of the queue that action is in. Following
// producer after producer from the first stuck head either comes back to a head already seen
// (the cycle, reported hop by hop) or reaches an event that no action produces (a dropped action).
void deadlock(const CheckContext& ctx, DiagnosticSink& sink) {
  const Schedule& s = *ctx.schedule;
  const Simulation& sim = simulation_of(ctx);
  if (sim.finished || sim.stuck.empty()) return;
  const auto& stuck = sim.stuck;
  auto action_at = [&](const TimedDeadlock::Stuck& st) -> const Action& { return s.ranks[st.rank].actions[st.step]; };
  auto head_of = [&](std::uint32_t rank, const Queue& queue) -> const TimedDeadlock::Stuck* {
    for (const auto& st : stuck) {
      const Action& a = action_at(st);
      if (st.rank == rank && queue_of(ctx, a.kind, a.stage, rank) == queue) return &st;
    }
    return nullptr;
  };
  // A hop: what the head waits for, and, when the action that would raise it is not the head of
  // its queue, the head it is queued behind (the shared-queue case: unrelated transfers).
  bool behind_comm = false;
  auto describe = [&](const TimedDeadlock::Stuck& st, const TimedDeadlock::Stuck* next) {
    std::string hop = fmt::format("rank {} waits at {} for {}", st.rank, text(ctx, action_at(st)), st.waiting_for);
    if (next == &st) {
      hop += ", which comes after it on the same queue";
    } else if (next && !raises(action_at(*next), st)) {
      const Action& head = action_at(*next);
      const Queue q = queue_of(ctx, head.kind, head.stage, next->rank);
      hop += fmt::format(", which rank {} has queued behind {}", next->rank, text(ctx, head));
      if (q.comm) {
        hop += " on " + comm_queue_text(ctx.p2p_queues, q.key);
        behind_comm = true;
      }
    }
    return hop;
  };
  std::vector<const TimedDeadlock::Stuck*> chain{&stuck.front()};
  std::string ending;
  std::size_t cycle_start = 0;
  for (;;) {
    const auto& cur = *chain.back();
    if (cur.waits_kind == ActionKind::Idle || cur.waits_stage >= ctx.stage_to_rank.size()) {
      ending = "and nothing it waits for can happen";
      break;
    }
    std::uint32_t producer = ctx.stage_to_rank[cur.waits_stage];
    const ActionIndex& idx = index_of(ctx);
    bool exists =
        idx.count(cur.waits_kind, cur.waits_stage, cur.waits_microbatch) > 0 ||
        (cur.waits_kind == ActionKind::I && idx.count(ActionKind::B, cur.waits_stage, cur.waits_microbatch) > 0);
    if (!exists) {
      ending = fmt::format("which no rank runs: it is missing from rank {}'s program", producer);
      break;
    }
    const auto* next = head_of(producer, queue_of(ctx, cur.waits_kind, cur.waits_stage, producer));
    if (!next) {
      ending = fmt::format("which rank {} cannot reach", producer);
      break;
    }
    auto seen = std::find(chain.begin(), chain.end(), next);
    if (seen != chain.end()) {
      cycle_start = static_cast<std::size_t>(seen - chain.begin());
      ending = "which closes the cycle";
      break;
    }
    chain.push_back(next);
  }
  const bool cycle = ending == "which closes the cycle";
  std::vector<Note> notes;
  for (std::size_t i = cycle_start; i < chain.size(); ++i) {
    const bool last = i + 1 == chain.size();
    const TimedDeadlock::Stuck* next = !last ? chain[i + 1] : cycle ? chain[cycle_start] : nullptr;
    std::string hop = describe(*chain[i], next);
    if (last) hop += ", " + ending;
    notes.push_back(note_at(ctx, chain[i]->rank, chain[i]->step, hop));
  }
  if (cycle && behind_comm && ctx.p2p_queues != P2pQueues::PerEdge) {
    Note shared;
    shared.message = shared_queue_note(ctx);
    notes.push_back(std::move(shared));
  }
  if (ctx.send_mode.eager()) {
    Note eager;
    eager.message = eager_note(ctx, chain, cycle_start);
    notes.push_back(std::move(eager));
  }
  const auto& first = *chain[cycle_start];
  report(ctx, sink, "deadlock", first.rank, first.step,
         cycle ? fmt::format("the schedule deadlocks: a cycle of {} waiting action(s), hop by hop below",
                             chain.size() - cycle_start)
               : fmt::format("the schedule cannot finish: {} waits for something that never comes",
                             text(ctx, s.ranks[first.rank].actions[first.step])),
         std::move(notes));
}

}  // namespace ppsched::check
