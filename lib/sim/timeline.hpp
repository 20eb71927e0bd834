// The simulator's result: when each action of a schedule ran, on which stream, and why then.
//
// Structure of arrays, one entry per non-idle action, rank by rank in program order (CSR:
// entries of rank r are [rank_begin[r], rank_begin[r+1])). Views (report/) read it together
// with the schedule it came from; it holds no text and no costs.
//
//   start/end     simulated times, in the cost model's unit (microseconds for measured costs)
//   stream        which of the rank's streams ran it (compute, send, recv)
//   step          the action's index in its rank's program (Schedule::ranks[r].actions[step])
//   released_by   the entry whose completion let this one start (a dependency, or the previous
//                 action on the same stream), or kNone when it started at time 0; following it
//                 from the last action to finish gives the critical path
//   peer          for a SEND or RECV, the entry of its partner on the other rank, else kNone
//   device_turn   empty unless ranks shared a device (TimedOptions::device_of_rank); then 1 where
//                 the action waited for its turn on the device, released_by being the action the
//                 device ran before it
//
// 8 bytes per action for the action itself (ir/), 29 here.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace ppsched {

enum class Stream : std::uint8_t { Compute, Send, Recv };
inline constexpr int kStreamCount = 3;
std::string_view stream_name(Stream s);  // "compute", "send", "recv"

struct Timeline {
  static constexpr std::uint32_t kNone = 0xFFFFFFFF;

  std::vector<std::uint32_t> rank_begin;  ///< ranks + 1 offsets
  std::vector<double> start, end;
  std::vector<Stream> stream;
  std::vector<std::uint32_t> step;
  std::vector<std::uint32_t> released_by;
  std::vector<std::uint32_t> peer;
  /// A SEND's or RECV's: when its transfer began (both ends posted; an eager SEND's own post; for
  /// the RECV of an eager SEND, the later of the two posts), or -1 when it moved nothing. What the
  /// bubble split counts as transfer time (split_idle_gap). Empty in a timeline that does not
  /// say (the runner's measured one): there a comm's whole wait counts as transfer.
  std::vector<double> transfer_begin;
  std::vector<std::uint8_t> device_turn;
  double makespan = 0;

  std::size_t size() const { return start.size(); }
  std::size_t rank_count() const { return rank_begin.empty() ? 0 : rank_begin.size() - 1; }
  /// The rank an entry belongs to (binary search over rank_begin).
  std::uint32_t rank_of(std::uint32_t entry) const;
};

}  // namespace ppsched
