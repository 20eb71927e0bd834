// Deadlock: the schedule cannot finish. Decided by the timed simulator itself (sim/timed.hpp),
// so the validator and `simulate` always agree; each stuck action is named with what it waits for.
#include <fmt/format.h>

#include "check/check_support.hpp"
#include "check/rules_impl.hpp"
#include "sim/timed.hpp"

namespace ppsched::check {

void deadlock(const CheckContext& ctx, DiagnosticSink& sink) {
  const Schedule& s = *ctx.schedule;
  TimedOptions opt;
  opt.costs = CostModel::uniform(ctx.stages, 1, unit_costs());
  std::vector<std::uint32_t> placement = ctx.stage_to_rank;
  try {
    simulate_timed(s, placement, opt);
  } catch (const TimedDeadlock& d) {
    if (d.stuck().empty()) return;
    const auto& first = d.stuck().front();
    std::vector<Note> notes;
    for (const auto& st : d.stuck())
      notes.push_back(note_at(ctx, st.rank, st.step,
                              fmt::format("rank {} waits here at {} for {}", st.rank,
                                          text(ctx, s.ranks[st.rank].actions[st.step]), st.waiting_for)));
    report(ctx, sink, "deadlock", first.rank, first.step,
           fmt::format("the schedule cannot finish: {} action(s) wait for each other or for something that never "
                       "comes",
                       d.stuck().size()),
           std::move(notes));
  }
}

}  // namespace ppsched::check
