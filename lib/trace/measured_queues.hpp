// Which communicator queues a profiled run had, read off its NCCL kernels' streams (`ppsched
// trace`). NCCL runs the operations of one communicator in order on one stream, so the streams a
// rank's SEND and RECV kernels ran on partition its transfers the way its communicators did. The
// answer is the coarsest model of sim/p2p_queues.hpp whose queues are exactly those partitions on
// every rank; the re-simulation then waits in the queues the run waited in. That choice moves the
// simulated time by 20-40% on interleaved orders (docs/bench.md, "ppsched trace").
#pragma once

#include <optional>
#include <string>

#include "sim/p2p_queues.hpp"
#include "trace/trace_analysis.hpp"

namespace ppsched {

struct MeasuredQueues {
  /// The model the streams match; nullopt when no SEND or RECV kernel was found, or when no model
  /// matches (a pool of streams shared out as transfers come, say).
  std::optional<P2pQueues> queues;
  std::size_t streams = 0;  ///< the most NCCL streams one rank used
  std::string evidence;     ///< one line for the report: what the streams showed
};

/// Reads the communicator queues of `a`'s run from the streams of its SEND and RECV kernels.
MeasuredQueues measured_p2p_queues(const TraceAnalysis& a);

}  // namespace ppsched
