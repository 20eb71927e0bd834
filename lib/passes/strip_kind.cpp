// Removing every action of one kind (idle steps are kept). Used to take REDUCE_GRAD out of
// PyTorch's single-stage orders before a lowering that places it again, and by tests that
// compare with PyTorch's send/recv-only files.
#include "passes/passes.hpp"

namespace ppsched {

Schedule strip_kind(const Schedule& s, ActionKind kind) {
  Schedule out = empty_like(s);
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    auto& program = out.ranks[r].actions;
    program.reserve(s.ranks[r].actions.size());
    for (const Action& a : s.ranks[r].actions)
      if (a.is_idle() || a.kind != kind) program.push_back(a);
  }
  return out;
}

}  // namespace ppsched
