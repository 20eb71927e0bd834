// Helpers the rule files share: reporting at an action and walking a schedule's leaves.
#pragma once

#include <string>

#include "check/check.hpp"
#include "ir/action_text.hpp"

namespace ppsched::check {

/// Reports `message` under `rule` at action (rank, step); `notes` are appended.
void report(const CheckContext& ctx, DiagnosticSink& sink, std::string_view rule, std::size_t rank, std::size_t step,
            std::string message, std::vector<Note> notes = {});

/// A note pointing at another action.
Note note_at(const CheckContext& ctx, std::size_t rank, std::size_t step, std::string message);

/// Calls f(rank, step, leaf) for every non-idle action, and for each sub-action of a container.
template <class F>
void for_each_leaf(const Schedule& s, F&& f) {
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    const auto& program = s.ranks[r].actions;
    for (std::size_t i = 0; i < program.size(); ++i) {
      const Action& a = program[i];
      if (a.is_idle()) continue;
      if (a.is_container()) [[unlikely]] {
        for (const Action& sub : s.subs(a)) f(r, i, sub);
      } else {
        f(r, i, a);
      }
    }
  }
}

inline std::string text(const CheckContext& ctx, const Action& a) { return action_text(a, ctx.schedule->sub_actions); }

}  // namespace ppsched::check
