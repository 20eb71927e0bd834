// V-Half and V-Min: the fixed V-shaped building blocks of "Pipeline Parallelism with Controllable
// Memory" (Qi et al., 2024, arXiv 2405.15362), as the authors' repository states them. Every rank
// repeats one block per microbatch with a period of 6 slots: its first-chunk forward, its
// second-chunk forward, the second chunk's input gradient and the first chunk's, at fixed offsets
// (the offsets below; vslot::pattern_offsets computes them); the two free slots of each period take deferred weight
// gradients, the second chunk's first. This is the pattern alone: the authors then reorder ("squeeze") it with a greedy
// pass (v_slot_reorder.hpp, which the automatic search replays); VHalfReordered and VMinReordered run the pattern
// through the paper's framework (v_block.hpp: repeated, squeezed, warm-up and cool-down laid out anew, holes filled, in
// unit slots), and the automatic schedule also squeezes it with the real costs.
//
//   V-Min  (about p/3 + 1 microbatches of activation): offsets i, 2p-1-i, 2p+g+i, 4p+g-1-i, g = 2
//          when 3 divides p, else 0;
//   V-Half (about p/2 + 1): offsets 2i, 3p-2-i, 3p+g-1+2i, 6p+g-2-i, g = 3 when p is even, else 0.
// Rank i holds stages i (first chunk) and 2p-1-i (second), V placement.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "synth/families.hpp"
#include "synth/v_block.hpp"
#include "synth/v_slot_reorder.hpp"

namespace ppsched::synth {

namespace {

// The pattern's first `slots` slots on every rank (all of it when `slots` covers it; `complete`
// says whether it did). Slots are generated in order, so a cut program is a prefix of the whole.
Schedule v_pattern(const SynthParams& p, bool half, std::uint64_t slots, bool& complete) {
  complete = true;
  const std::uint32_t R = p.ranks, M = p.microbatches;
  Schedule s = make_schedule(p, 2, PlacementStyle::V);
  for (std::uint32_t i = 0; i < R; ++i) {
    const std::uint32_t first = i, second = 2 * R - 1 - i;
    const std::array<std::int64_t, 4> offset = vslot::pattern_offsets(R, i, half);
    // The four kinds of action in slot order: (slot, which) for every microbatch, merged.
    const Action kinds[4] = {F(first, 0), F(second, 0), I(second, 0), I(first, 0)};
    std::array<std::uint32_t, 4> next{};  // next microbatch of each kind
    // Weight gradients wait in microbatch order: those of the input gradients already placed
    // (next[2] for the second chunk, next[3] for the first) from these on.
    std::uint32_t w_second = 0, w_first = 0;
    auto& ops = s.ranks[i].actions;
    ops.reserve(std::size_t{6} * M);
    const std::uint32_t total = 4 * M;
    std::int64_t slot = 0, placed = 0;
    for (; placed < total && static_cast<std::uint64_t>(slot) < slots; ++slot) {
      int which = -1;
      for (int k = 0; k < 4; ++k)
        if (next[k] < M && offset[k] + 6 * std::int64_t{next[k]} == slot) which = k;
      if (which >= 0) {
        ops.push_back(Action::make(kinds[which].kind, kinds[which].stage, next[which]++));
        ++placed;
      } else if (w_second < next[2]) {  // a free slot: a deferred W, the second chunk's first
        ops.push_back(W(second, w_second++));
      } else if (w_first < next[3]) {
        ops.push_back(W(first, w_first++));
      }
    }
    if (placed < total) {
      complete = false;
      continue;
    }
    while (w_second < M) ops.push_back(W(second, w_second++));
    while (w_first < M) ops.push_back(W(first, w_first++));
  }
  return s;
}

// The pattern as a building block (its offsets modulo the period of six, the weight gradients in
// the first free slots after their input gradients), through the framework at its own memory.
Schedule v_reordered(const SynthParams& p, bool half) {
  const std::uint32_t R = p.ranks;
  const char* name = half ? "VHalfReordered" : "VMinReordered";
  if (R < 2) throw SynthError(std::string(name) + " needs at least 2 ranks, but got " + std::to_string(R));
  std::vector<vblock::Row> rows;
  for (std::uint32_t i = 0; i < R; ++i) {
    const auto offset = vslot::pattern_offsets(R, i, half);
    vblock::Row row{};
    for (int k = 0; k < 4; ++k)
      row[static_cast<std::size_t>(k)] = static_cast<int>(offset[static_cast<std::size_t>(k)] % vblock::kPeriod);
    if (!vblock::fill_weight_grads(row)) throw SynthError(std::string(name) + ": the pattern leaves no slot for a W");
    rows.push_back(row);
  }
  double work = 0;
  auto programs = vblock::reorder(vblock::first_positions(rows), p.microbatches, 2 * R, work);
  if (!programs)
    throw SynthError(std::string(name) + " cannot reorder its pattern at " + std::to_string(R) + " ranks and " +
                     std::to_string(p.microbatches) + " microbatches");
  Schedule s = make_schedule(p, 2, PlacementStyle::V);
  for (std::uint32_t i = 0; i < R; ++i) s.ranks[i].actions = std::move((*programs)[i]);
  return s;
}

}  // namespace

Schedule v_half_reordered(const SynthParams& p) { return v_reordered(p, true); }
Schedule v_min_reordered(const SynthParams& p) { return v_reordered(p, false); }

Schedule v_half(const SynthParams& p) {
  bool complete = true;
  return v_pattern(p, true, UINT64_MAX, complete);
}
Schedule v_min(const SynthParams& p) {
  bool complete = true;
  return v_pattern(p, false, UINT64_MAX, complete);
}
Schedule v_half_prefix(const SynthParams& p, std::uint64_t slots, bool& complete) {
  return v_pattern(p, true, slots, complete);
}
Schedule v_min_prefix(const SynthParams& p, std::uint64_t slots, bool& complete) {
  return v_pattern(p, false, slots, complete);
}

}  // namespace ppsched::synth
