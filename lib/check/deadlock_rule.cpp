// Deadlock: the schedule cannot finish. Decided by the timed simulator itself (sim/timed.hpp),
// so the validator and `simulate` always agree; each stuck action is named with what it waits for.
#include <fmt/format.h>

#include "check/check_support.hpp"
#include "check/rules_impl.hpp"
#include "sim/timed.hpp"

namespace ppsched::check {

const Simulation& simulation_of(const CheckContext& ctx) {
  if (!ctx.simulation) {
    auto sim = std::make_shared<Simulation>();
    TimedOptions opt;
    opt.costs = ctx.costs ? *ctx.costs : CostModel::uniform(ctx.stages, ctx.ranks && ctx.stages >= ctx.ranks
                                                                            ? ctx.stages / ctx.ranks
                                                                            : 1,
                                                            unit_costs());
    try {
      sim->timeline = simulate_timed(*ctx.schedule, ctx.stage_to_rank, opt);
      sim->finished = true;
    } catch (const TimedDeadlock& d) {
      sim->stuck = d.stuck();
    }
    ctx.simulation = std::move(sim);
  }
  return *ctx.simulation;
}

void deadlock(const CheckContext& ctx, DiagnosticSink& sink) {
  const Schedule& s = *ctx.schedule;
  const Simulation& sim = simulation_of(ctx);
  if (sim.finished || sim.stuck.empty()) return;
  const auto& first = sim.stuck.front();
  std::vector<Note> notes;
  for (const auto& st : sim.stuck)
    notes.push_back(note_at(ctx, st.rank, st.step,
                            fmt::format("rank {} waits here at {} for {}", st.rank,
                                        text(ctx, s.ranks[st.rank].actions[st.step]), st.waiting_for)));
  report(ctx, sink, "deadlock", first.rank, first.step,
         fmt::format("the schedule cannot finish: {} action(s) wait for each other or for something that never comes",
                     sim.stuck.size()),
         std::move(notes));
}

}  // namespace ppsched::check
