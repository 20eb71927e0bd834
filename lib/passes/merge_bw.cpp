// I + W -> B (PyTorch's `_merge_bw`). Idle steps between the two do not prevent the merge.
// PyTorch compares stage and microbatch only, so containers of kind I and W (stage -1,
// microbatch None) merge too, into `-1B`; that is kept.
#include <vector>

#include "passes/passes.hpp"

namespace ppsched {

Schedule merge_bw(const Schedule& s) {
  Schedule out = empty_like(s);
  std::vector<Action> elements;
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    elements.clear();
    for (const Action& a : s.ranks[r].actions)
      if (!a.is_idle()) elements.push_back(a);
    auto& program = out.ranks[r].actions;
    program.reserve(elements.size());
    for (std::size_t i = 0; i < elements.size(); ++i) {
      const Action& a = elements[i];
      if (a.kind == ActionKind::I && i + 1 < elements.size()) {
        const Action& next = elements[i + 1];
        if (next.kind == ActionKind::W && next.stage == a.stage && next.microbatch() == a.microbatch()) {
          program.push_back(Action::make(ActionKind::B, a.stage, a.microbatch()));
          ++i;
          continue;
        }
      }
      program.push_back(a);
    }
  }
  return out;
}

}  // namespace ppsched
