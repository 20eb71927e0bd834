// ZB-V (Zero Bubble paper, section 6): two chunks per rank in a V, chunk 0 going down the
// ranks and chunk 1 coming back up, with the backward split into I and W.
//
// As PyTorch does, the order is generated for max(2p-1, m) microbatches (enough to fill the
// pipeline) and every action on a microbatch >= m then becomes an idle step, which leaves idle
// holes when m < 2p-1.
#include <algorithm>

#include "synth/families.hpp"

namespace ppsched::synth {

Schedule zbv_zero_bubble(const SynthParams& p) {
  const std::uint32_t R = p.ranks, M = p.microbatches;
  Schedule s = make_schedule(p, 2, PlacementStyle::V);
  const std::uint32_t n = std::max(2 * R - 1, M);
  for (std::uint32_t r = 0; r < R; ++r) {
    auto& ops = s.ranks[r].actions;
    ops.reserve(r + std::size_t{6} * n);  // its idle steps, then F, I and W of both chunks
    const std::uint32_t c0 = r, c1 = 2 * R - 1 - r;
    std::uint32_t f0 = 0, f1 = 0, b0 = 0, b1 = 0;
    idle(ops, r);
    for (std::uint32_t i = 0; i < 2 * (R - r) - 1; ++i) ops.push_back(F(c0, f0++));
    for (std::uint32_t i = 0; i < r; ++i) {
      ops.push_back(F(c1, f1++));
      ops.push_back(F(c0, f0++));
    }
    for (std::uint32_t i = 0; i < R - r; ++i) {
      ops.push_back(F(c1, f1));
      ops.push_back(I(c1, b1));
      ops.push_back(W(c1, b1));
      ++f1, ++b1;
    }
    while (f1 < f0 || f0 < n) {  // steady state
      if (f0 < n) ops.push_back(F(c0, f0++));
      ops.push_back(I(c0, b0));
      ops.push_back(W(c0, b0));
      ++b0;
      ops.push_back(F(c1, f1++));
      ops.push_back(I(c1, b1));
      ops.push_back(W(c1, b1));
      ++b1;
    }
    std::uint32_t w0 = b0, w1 = b1;
    for (std::uint32_t i = 0; i < r; ++i) {  // cool-down
      ops.push_back(I(c0, b0++));
      ops.push_back(I(c1, b1++));
    }
    for (std::uint32_t i = 0; i < R - r; ++i) {
      ops.push_back(I(c0, b0++));
      ops.push_back(W(c0, w0++));
    }
    while (w1 < b1) ops.push_back(W(c1, w1++));
    while (w0 < b0) ops.push_back(W(c0, w0++));
    if (n > M)
      for (Action& a : ops)
        if (!a.is_idle() && a.microbatch() >= M) a = Action::idle();
  }
  return s;
}

}  // namespace ppsched::synth
