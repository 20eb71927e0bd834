// Looped BFS (breadth-first pipeline parallelism): each rank runs every microbatch through
// its first stage, then its next stage, and the backwards in reverse, microbatches descending.
#include "synth/families.hpp"

namespace ppsched::synth {

Schedule looped_bfs(const SynthParams& p) {
  const std::uint32_t R = p.ranks, M = p.microbatches, L = p.stages_per_rank;
  Schedule s = make_schedule(p, L, PlacementStyle::Loop);
  for (std::uint32_t r = 0; r < R; ++r) {
    auto& ops = s.ranks[r].actions;
    idle(ops, r);
    for (std::uint32_t l = 0; l < L; ++l)
      for (std::uint32_t m = 0; m < M; ++m) ops.push_back(F(l * R + r, m));
    idle(ops, 2 * (std::int64_t{R} - 1 - r));
    for (std::uint32_t l = L; l-- > 0;)
      for (std::uint32_t m = M; m-- > 0;) ops.push_back(B(l * R + r, m));
  }
  return s;
}

}  // namespace ppsched::synth
