// The synthesizers, one per file, and the small helpers they share. Internal to lib/synth.
#pragma once

#include <vector>

#include "synth/synth.hpp"

namespace ppsched::synth {

Schedule gpipe(const SynthParams& p);
Schedule one_f_one_b(const SynthParams& p);
Schedule interleaved_1f1b(const SynthParams& p);
Schedule looped_bfs(const SynthParams& p);
Schedule interleaved_zero_bubble(const SynthParams& p);
Schedule zbv_zero_bubble(const SynthParams& p);
Schedule dualpipev(const SynthParams& p);
Schedule zb_h1(const SynthParams& p);
Schedule zb_h2(const SynthParams& p);
Schedule v_half(const SynthParams& p);
Schedule v_min(const SynthParams& p);
/// V-Half and V-Min through the controllable-memory framework (v_block.hpp).
Schedule v_half_reordered(const SynthParams& p);
Schedule v_min_reordered(const SynthParams& p);
/// V-Half or V-Min cut after the first `slots` slots of every rank (Family::build_prefix).
Schedule v_half_prefix(const SynthParams& p, std::uint64_t slots, bool& complete);
Schedule v_min_prefix(const SynthParams& p, std::uint64_t slots, bool& complete);

/// An empty schedule of p.ranks ranks with sizes and placement filled in.
Schedule make_schedule(const SynthParams& p, std::uint32_t stages_per_rank, PlacementStyle style);

inline Action F(std::uint32_t stage, std::uint32_t mb) {
  return Action::make(ActionKind::F, static_cast<std::uint16_t>(stage), mb);
}
inline Action B(std::uint32_t stage, std::uint32_t mb) {
  return Action::make(ActionKind::B, static_cast<std::uint16_t>(stage), mb);
}
inline Action I(std::uint32_t stage, std::uint32_t mb) {
  return Action::make(ActionKind::I, static_cast<std::uint16_t>(stage), mb);
}
inline Action W(std::uint32_t stage, std::uint32_t mb) {
  return Action::make(ActionKind::W, static_cast<std::uint16_t>(stage), mb);
}
inline void idle(std::vector<Action>& ops, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) ops.push_back(Action::idle());
}

}  // namespace ppsched::synth
