// The action: one step of one rank's program. Everything in ppsched speaks this type.
//
// An Action is 8 bytes so that a 10M-action schedule is 80 MB of flat arrays and a pass
// streams through it at memory speed. The price is a fixed range for its fields:
//
//   stage       0 .. 65534        (kMaxStage; 65535 means "no stage")
//   microbatch  0 .. 4294967294   (kMaxMicrobatch; 0xFFFFFFFF means "no microbatch")
//
// A container action (PyTorch's OVERLAP_F_B, which runs its sub-actions back to back) keeps
// its sub-actions out of line, in the schedule's SubActionTable; the container stores the
// index of its group there instead of a microbatch. An idle step (PyTorch's empty cell) is
// an Action of kind Idle.
//
// Not here: text form (action_text.hpp), per-rank programs and placement (schedule.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ppsched {

/// The kinds of step a rank can take, with PyTorch's names (kind_name).
/// Idle is ppsched's name for PyTorch's `None` cell.
enum class ActionKind : std::uint8_t {
  Idle,
  F,           ///< forward
  B,           ///< full backward (input grad and weight grad)
  I,           ///< backward for the input grad only
  W,           ///< backward for the weight grad only
  SendF,       ///< send forward activations to the next stage
  RecvF,       ///< receive forward activations from the previous stage
  SendB,       ///< send gradients to the previous stage
  RecvB,       ///< receive gradients from the next stage
  Unshard,     ///< FSDP all-gather of a stage's parameters
  Reshard,     ///< FSDP release of a stage's parameters
  ReduceGrad,  ///< cross-microbatch gradient reduction, after a stage's last backward
  OverlapFB,   ///< container: runs its sub-actions (one F, one B) back to back
};

inline constexpr int kActionKindCount = 13;

/// PyTorch's text for a kind ("F", "SEND_F", "OVERLAP_F_B"); empty for Idle.
std::string_view kind_name(ActionKind kind);

/// The kind whose PyTorch text is exactly `name`, if any (Idle has no name).
std::optional<ActionKind> kind_from_name(std::string_view name);

/// F, B, I, W and OVERLAP_F_B: what PyTorch's `is_compute_op` calls compute.
constexpr bool is_compute(ActionKind k) {
  return k == ActionKind::F || k == ActionKind::B || k == ActionKind::I || k == ActionKind::W ||
         k == ActionKind::OverlapFB;
}

/// SEND_F, RECV_F, SEND_B, RECV_B.
constexpr bool is_send_recv(ActionKind k) {
  return k == ActionKind::SendF || k == ActionKind::RecvF || k == ActionKind::SendB || k == ActionKind::RecvB;
}

/// Kinds whose canonical form carries a microbatch index (F, B, I, W and the four comms).
constexpr bool takes_microbatch(ActionKind k) {
  return k == ActionKind::F || k == ActionKind::B || k == ActionKind::I || k == ActionKind::W || is_send_recv(k);
}

/// One step of a rank's program. Trivially copyable, 8 bytes, compared field by field.
struct Action {
  static constexpr std::uint16_t kNoStage = 0xFFFF;
  static constexpr std::uint16_t kMaxStage = 0xFFFE;
  static constexpr std::uint32_t kNoMicrobatch = 0xFFFFFFFF;
  static constexpr std::uint32_t kMaxMicrobatch = 0xFFFFFFFE;
  static constexpr std::uint8_t kContainerFlag = 0x1;

  /// Microbatch index, or kNoMicrobatch; for a container, its group in the SubActionTable.
  std::uint32_t index = kNoMicrobatch;
  std::uint16_t stage = kNoStage;
  ActionKind kind = ActionKind::Idle;
  std::uint8_t flags = 0;

  static constexpr Action idle() { return Action{}; }
  static constexpr Action make(ActionKind kind, std::uint16_t stage, std::uint32_t microbatch = kNoMicrobatch) {
    return Action{microbatch, stage, kind, 0};
  }
  /// A container of `kind` whose sub-actions are group `group` of the schedule's SubActionTable.
  static constexpr Action container(ActionKind kind, std::uint32_t group) {
    return Action{group, kNoStage, kind, kContainerFlag};
  }

  constexpr bool is_idle() const { return kind == ActionKind::Idle; }
  constexpr bool is_container() const { return (flags & kContainerFlag) != 0; }
  constexpr bool has_stage() const { return stage != kNoStage; }
  constexpr bool has_microbatch() const { return !is_container() && index != kNoMicrobatch; }
  /// The microbatch index, or kNoMicrobatch (always for containers and idle steps).
  constexpr std::uint32_t microbatch() const { return is_container() ? kNoMicrobatch : index; }
  /// The container's group in the SubActionTable (only meaningful when is_container()).
  constexpr std::uint32_t group() const { return index; }

  friend constexpr bool operator==(const Action&, const Action&) = default;
};

static_assert(sizeof(Action) == 8, "a plain action must stay 8 bytes: the hot arrays depend on it");

}  // namespace ppsched
