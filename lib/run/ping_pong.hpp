// The figure Device::ping_pong_us returns, from the round trips it timed: half the median round
// trip, the one-way time of a transfer there and back (nccl-tests' sendrecv does the same).
//
// Header only, and free of CUDA: the CUDA backend (a module that links no ppsched library) uses
// it, and the unit tests check it on machines without a GPU.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace ppsched::run {

/// Half the median of `round_trip_us` (the mean of the middle two for an even count, as
/// run/stats.hpp's median). Throws std::invalid_argument when there are none: the caller's
/// bug (the CUDA device refuses fewer than one round before it times any), not a user's error.
inline double one_way_us(std::vector<double> round_trip_us) {
  if (round_trip_us.empty()) throw std::invalid_argument("one_way_us: no round trips were timed");
  std::sort(round_trip_us.begin(), round_trip_us.end());
  const std::size_t n = round_trip_us.size();
  const double median = n % 2 ? round_trip_us[n / 2] : 0.5 * (round_trip_us[n / 2 - 1] + round_trip_us[n / 2]);
  return 0.5 * median;
}

/// Which of two processes starts each round trip: the lower index sends first, the other echoes.
inline bool starts_ping_pong(int process, int peer) { return process < peer; }

}  // namespace ppsched::run
