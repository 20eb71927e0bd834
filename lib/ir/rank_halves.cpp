#include "ir/rank_halves.hpp"

namespace ppsched {

std::size_t second_half_start(const Schedule& s) {
  const std::size_t ranks = s.rank_count(), steps = s.step_count();
  if (ranks < 2 || steps < kRankHalvesFromSteps || std::thread::hardware_concurrency() < 2) return ranks;
  std::size_t before = 0, mid = 0;
  while (mid + 1 < ranks && 2 * (before + s.ranks[mid].actions.size()) <= steps)
    before += s.ranks[mid++].actions.size();
  return mid == 0 ? 1 : mid;
}

}  // namespace ppsched
