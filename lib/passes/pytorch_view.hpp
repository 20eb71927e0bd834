// How PyTorch sees an IR action, for the passes that must reproduce its behaviour exactly,
// malformed input included.
//
// PyTorch's `_Action` is (stage_index, computation_type, microbatch_index, sub_actions). A
// container's own stage is -1 and its microbatch None; the IR stores kNoStage and the group
// index instead. A container whose parentheses held nothing has `sub_actions=None` in PyTorch
// and then behaves like a plain action (-1, kind, None) everywhere. Any kind may be a
// container (`(0F1)F` parses); only OVERLAP_F_B is special to `_add_unshard_reshard`.
#pragma once

#include <cstdint>
#include <optional>

#include "ir/action.hpp"
#include "ir/schedule.hpp"

namespace ppsched::pytorch {

/// PyTorch's stage index: -1 for a container.
inline std::int64_t stage(const Action& a) { return a.has_stage() ? a.stage : -1; }

/// True when PyTorch's `sub_actions` is not None: a container with at least one sub-action.
inline bool has_sub_actions(const Schedule& s, const Action& a) { return a.is_container() && !s.subs(a).empty(); }

/// The action as a plain value with PyTorch's equality: a container becomes (-1, kind, None).
inline Action as_plain(const Action& a) { return a.is_container() ? Action::make(a.kind, Action::kNoStage) : a; }

/// The plain action (stage, kind, microbatch) when it can exist in the IR: stage -1 is the
/// container placeholder; stages below -1 or above kMaxStage never occur, so nullopt.
inline std::optional<Action> plain(std::int64_t stage, ActionKind kind, std::uint32_t microbatch) {
  if (stage == -1) return Action::make(kind, Action::kNoStage, microbatch);
  if (stage < 0 || stage > Action::kMaxStage) return std::nullopt;
  return Action::make(kind, static_cast<std::uint16_t>(stage), microbatch);
}

/// Calls f(leaf) for what PyTorch walks in place of `a`: its sub-actions when it has any,
/// otherwise the action itself (as_plain). Idle steps have no leaves.
template <class F>
void for_each_leaf(const Schedule& s, const Action& a, F&& f) {
  if (a.is_idle()) return;
  if (has_sub_actions(s, a)) {
    for (const Action& sub : s.subs(a)) f(sub);
  } else {
    f(as_plain(a));
  }
}

}  // namespace ppsched::pytorch
