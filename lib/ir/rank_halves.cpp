#include "ir/rank_halves.hpp"

namespace ppsched {

namespace {
thread_local bool one_thread_here = false;
}  // namespace

OneThreadHere::OneThreadHere() : before_(one_thread_here) { one_thread_here = true; }
OneThreadHere::~OneThreadHere() { one_thread_here = before_; }

std::size_t second_half_start(const Schedule& s) {
  const std::size_t ranks = s.rank_count(), steps = s.step_count();
  if (ranks < 2 || steps < kRankHalvesFromSteps || one_thread_here || std::thread::hardware_concurrency() < 2)
    return ranks;
  std::size_t before = 0, mid = 0;
  while (mid + 1 < ranks && 2 * (before + s.ranks[mid].actions.size()) <= steps)
    before += s.ranks[mid++].actions.size();
  return mid == 0 ? 1 : mid;
}

}  // namespace ppsched
