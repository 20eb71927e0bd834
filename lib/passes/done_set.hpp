// The per-rank sets of actions a rank has run (or emitted), for the kinds PyTorch's readiness
// rule asks about (F, B, I, SEND_F, RECV_F, SEND_B, RECV_B): its lock-step dry run
// (sim/pytorch_steps.cpp) and its send/recv lowering (passes/add_send_recv.cpp) both keep one.
//
// In a well-formed schedule a stage's actions run on the rank that owns it, so an action its
// stage's owner ran is a bit (one per kind) in the (stage, microbatch) cell of a KeyTable, dense
// unless the grid is far bigger than the schedule (passes/key_table.hpp). Everything else (an
// action run on a rank that does not own its stage, no microbatch at all) goes to a MicrobatchSet
// keyed by rank, stage and kind: malformed input costs speed, never memory or correctness.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/action.hpp"
#include "passes/key_table.hpp"
#include "passes/microbatch_set.hpp"

namespace ppsched {

class DoneSet {
 public:
  /// `stage_to_rank` (which must outlive the set) says who owns each stage; the dense table covers
  /// stage_to_rank.size() stages x `microbatches`, for a schedule of `steps` steps.
  DoneSet(const std::vector<std::uint32_t>& stage_to_rank, std::uint32_t microbatches, std::size_t steps)
      : owner_(stage_to_rank), owned_(static_cast<std::uint32_t>(stage_to_rank.size()), microbatches, steps) {}

  static constexpr bool recorded(ActionKind k) {
    return k >= ActionKind::F && k <= ActionKind::RecvB && k != ActionKind::W;
  }
  /// A kind's bit in a (stage, microbatch) cell: F..RECV_B are kinds 1..8, one bit each (the dry
  /// run's placing by moments, sim/step_moments.cpp, keeps the same cells).
  static constexpr std::uint8_t bit(ActionKind kind) {
    return static_cast<std::uint8_t>(1u << (static_cast<unsigned>(kind) - 1));
  }

  /// Records that `rank` ran (kind, stage, microbatch); `kind` must be recorded().
  void insert(std::uint32_t rank, std::uint16_t stage, ActionKind kind, std::uint32_t microbatch) {
    if (owns(rank, stage) && microbatch < owned_.microbatches()) {
      owned_[owned_.key(0, stage, microbatch)] |= bit(kind);
      return;
    }
    others_.insert(name(rank, stage, kind), microbatch);
    any_others_ = true;
  }

  bool contains(std::uint32_t rank, std::uint16_t stage, ActionKind kind, std::uint32_t microbatch) const {
    if (owns(rank, stage) && microbatch < owned_.microbatches())
      return owned_.get(owned_.key(0, stage, microbatch)) & bit(kind);
    return any_others_ && others_.contains(name(rank, stage, kind), microbatch);
  }

 private:
  bool owns(std::uint32_t rank, std::uint16_t stage) const { return stage < owner_.size() && owner_[stage] == rank; }
  static std::uint64_t name(std::uint32_t rank, std::uint16_t stage, ActionKind kind) {
    return std::uint64_t{rank} << 32 | std::uint64_t{stage} << 8 | static_cast<std::uint64_t>(kind);
  }

  const std::vector<std::uint32_t>& owner_;
  KeyTable<std::uint8_t, 1> owned_;  // by (stage, microbatch): the kinds its owner ran
  MicrobatchSet others_;
  bool any_others_ = false;
};

}  // namespace ppsched
