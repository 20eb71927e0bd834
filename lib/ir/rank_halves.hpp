// Two halves of a schedule's ranks, read by two threads.
//
// The passes every command runs before it simulates (the inferred sizes and placement, the structure
// proof, the simulator's scan) each read every action once and keep a little per rank or per stage.
// On a 6M-action schedule each costs 5-30 ms of a run whose whole budget is about ten times the
// time to read the file (issue 48), and the machine has two cores: such a pass reads each half of
// the ranks on its own thread and merges the two results, which gives exactly the one-thread answer
// when the merge respects rank order.
#pragma once

#include <cstddef>
#include <exception>
#include <thread>

#include "ir/schedule.hpp"

namespace ppsched {

/// Below this many steps a schedule is read by one thread: a thread costs about as much as
/// reading 100k actions.
inline constexpr std::size_t kRankHalvesFromSteps = std::size_t{1} << 20;

/// Where the second half starts: the rank that splits the steps most evenly; rank_count() when the
/// schedule is too small to split, has one rank, the machine one core, or the calling thread is
/// inside a OneThreadHere. The simulations that split their ranks between two threads
/// (sim/halves_meeting.hpp) split here too.
std::size_t second_half_start(const Schedule& s);

/// While one is alive on a thread, second_half_start answers "one half" there: for a caller that
/// already keeps every core busy with threads of its own (tune's trials), where a second thread per
/// pass or simulation would only take turns with them, and a half that waits for the other would spin.
class OneThreadHere {
 public:
  OneThreadHere();
  ~OneThreadHere();
  OneThreadHere(const OneThreadHere&) = delete;
  OneThreadHere& operator=(const OneThreadHere&) = delete;

 private:
  bool before_;
};

/// Calls f(0, 0, mid) and f(1, mid, rank_count()) for mid = second_half_start(s): the second on a
/// thread of its own when mid < rank_count() (f(1, n, n) otherwise, an empty half). f may read `s`
/// and write what belongs to its half only. An exception from either call is rethrown here, the
/// first half's first.
template <class F>
void for_rank_halves(const Schedule& s, F&& f) {
  const std::size_t mid = second_half_start(s), end = s.rank_count();
  if (mid == end) {
    f(std::size_t{0}, std::size_t{0}, end);
    f(std::size_t{1}, end, end);
    return;
  }
  std::exception_ptr second_failed;
  std::thread second([&] {
    try {
      f(std::size_t{1}, mid, end);
    } catch (...) {
      second_failed = std::current_exception();
    }
  });
  try {
    f(std::size_t{0}, std::size_t{0}, mid);
  } catch (...) {
    second.join();
    throw;
  }
  second.join();
  if (second_failed) std::rethrow_exception(second_failed);
}

}  // namespace ppsched
