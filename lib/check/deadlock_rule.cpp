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

const Simulation& simulation_of(const CheckContext& ctx) {
  if (!ctx.simulation) {
    auto sim = std::make_shared<Simulation>();
    // One run gives the verdict and, when it finishes, what the thresholds compare: the
    // aggregates run (no Timeline) is cheaper than even the verdict-only find_stuck, and a
    // schedule that cannot finish is run again by it with a Timeline to name the stuck actions.
    TimedOptions opt;
    opt.costs = cost_model(ctx);
    if (ctx.stage_spec) opt.comm.stages = *ctx.stage_spec;  // the sizes an eager threshold compares (no topology: free)
    opt.send = ctx.send_mode;
    try {
      sim->analysis = simulate_aggregates(*ctx.schedule, ctx.stage_to_rank, opt, memory_model(ctx));
      sim->finished = true;
    } catch (const TimedDeadlock& d) {
      sim->stuck = d.stuck();
    }
    ctx.simulation = std::move(sim);
  }
  return *ctx.simulation;
}

namespace {

// Which in-order queue of its rank an action runs on in the simulator: 0 compute, 1 comm.
int queue_of(ActionKind k) { return is_send_recv(k) ? 1 : 0; }

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
  auto head_of = [&](std::uint32_t rank, int queue) -> const TimedDeadlock::Stuck* {
    for (const auto& st : stuck)
      if (st.rank == rank && queue_of(s.ranks[rank].actions[st.step].kind) == queue) return &st;
    return nullptr;
  };
  auto describe = [&](const TimedDeadlock::Stuck& st) {
    return fmt::format("rank {} waits at {} for {}", st.rank, text(ctx, s.ranks[st.rank].actions[st.step]),
                       st.waiting_for);
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
    const auto* next = head_of(producer, queue_of(cur.waits_kind));
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
  std::vector<Note> notes;
  for (std::size_t i = cycle_start; i < chain.size(); ++i) {
    std::string hop = describe(*chain[i]);
    if (i + 1 == chain.size()) hop += ", " + ending;
    notes.push_back(note_at(ctx, chain[i]->rank, chain[i]->step, hop));
  }
  if (ctx.send_mode.eager()) {
    Note eager;
    eager.message = eager_note(ctx, chain, cycle_start);
    notes.push_back(std::move(eager));
  }
  const auto& first = *chain[cycle_start];
  bool cycle = ending == "which closes the cycle";
  report(ctx, sink, "deadlock", first.rank, first.step,
         cycle ? fmt::format("the schedule deadlocks: a cycle of {} waiting action(s), hop by hop below",
                             chain.size() - cycle_start)
               : fmt::format("the schedule cannot finish: {} waits for something that never comes",
                             text(ctx, s.ranks[first.rank].actions[first.step])),
         std::move(notes));
}

}  // namespace ppsched::check
