// REDUCE_GRAD placement (PyTorch's `_add_reduce_grad`): a stage's gradients are reduced once,
// right after the action that completes its last backward. B and W count; I does not, since
// it leaves the weight gradient still to come.
#include <vector>

#include "passes/passes.hpp"

namespace ppsched {

Schedule add_reduce_grad(const Schedule& s, std::uint32_t num_microbatches) {
  Schedule out = empty_like(s);
  std::vector<std::uint32_t> count;
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    count.assign(count.size(), 0);
    auto& program = out.ranks[r].actions;
    program.reserve(s.ranks[r].actions.size() + 4);
    auto bump = [&](const Action& leaf, std::vector<std::uint16_t>& reduce) {
      if (leaf.kind != ActionKind::B && leaf.kind != ActionKind::W) return;
      if (!leaf.has_stage()) return;
      if (leaf.stage >= count.size()) count.resize(leaf.stage + 1u, 0);
      if (++count[leaf.stage] == num_microbatches) reduce.push_back(leaf.stage);
    };
    std::vector<std::uint16_t> reduce;
    for (const Action& a : s.ranks[r].actions) {
      if (a.is_idle()) continue;
      program.push_back(a);
      reduce.clear();
      // PyTorch looks inside OVERLAP_F_B containers only.
      if (a.is_container() && a.kind == ActionKind::OverlapFB) {
        for (const Action& sub : s.subs(a)) bump(sub, reduce);
      } else if (!a.is_container()) {
        bump(a, reduce);
      }
      for (std::uint16_t stage : reduce) program.push_back(Action::make(ActionKind::ReduceGrad, stage));
    }
  }
  return out;
}

}  // namespace ppsched
