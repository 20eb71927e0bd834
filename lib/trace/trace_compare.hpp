// The measured run beside the simulator (`ppsched trace`): the order as run, without its
// communication, simulated with the measured costs (every hop's transfer the median measured one)
// under a runtime model, so that what the real run lost beyond what the schedule explains shows.
#pragma once

#include <string>
#include <vector>

#include "sim/analysis.hpp"
#include "sim/p2p_queues.hpp"
#include "sim/runtime.hpp"
#include "trace/trace_analysis.hpp"

namespace ppsched {

struct TraceComparison {
  double simulated_iteration_us = 0;
  SimAnalysis simulated;
  Schedule run;                               ///< the compute-only order as the runtime ran it in the simulation
  P2pQueues p2p_queues = P2pQueues::PerRank;  ///< the communicator queues it was simulated with
  std::string p2p_queues_basis;               ///< why those: measured, asked for, or the fallback
};

/// Throws UserError when the executed order cannot be simulated (a deadlock, what the runtime
/// refuses), saying why.
TraceComparison compare_with_simulator(const TraceAnalysis& measured, const RuntimeModel& model,
                                       P2pQueues queues = P2pQueues::PerRank);

}  // namespace ppsched
