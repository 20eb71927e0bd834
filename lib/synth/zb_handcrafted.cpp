#include "synth/zb_handcrafted.hpp"

#include <algorithm>

namespace ppsched::synth {

Schedule zb_handcrafted(const SynthParams& p, bool h2) {
  const std::uint32_t R = p.ranks, M = p.microbatches;
  Schedule s = make_schedule(p, 1, PlacementStyle::Loop);
  // Below 2p-2 microbatches ZB-H2's extra warm-up cannot be kept busy (its makespan would
  // exceed the lower bound 3m+p-1); ZB-H1's shape meets that bound there, with less memory.
  if (h2 && M + 2 < 2 * R) h2 = false;
  for (std::uint32_t r = 0; r < R; ++r) {
    auto& ops = s.ranks[r].actions;
    const std::uint32_t warmup = std::min(M, h2 ? 2 * (R - r) - 1 : R - r);
    const std::uint32_t lag = h2 ? 2 * r : r;
    std::uint32_t f = 0, w = 0;
    while (f < warmup) ops.push_back(F(r, f++));
    for (std::uint32_t k = 0; k < M; ++k) {
      ops.push_back(I(r, k));
      // The W before the next F: the forward then finds warmup + lag - 1 microbatches held,
      // so the peak is warmup + lag (p for ZB-H1, 2p-1 for ZB-H2).
      if (k >= lag) ops.push_back(W(r, w++));
      if (f < M) ops.push_back(F(r, f++));
    }
    while (w < M) ops.push_back(W(r, w++));
  }
  return s;
}

}  // namespace ppsched::synth
