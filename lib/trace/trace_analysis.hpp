// `ppsched trace`: what a profiled pipeline run did (ir/measured.hpp, one MeasuredRank per rank's
// trace), put on one clock and measured, and set beside what the simulator says of the same order
// with the same costs.
//
//   clocks     Each host has its own clock. A SEND and its RECV (stage s's SEND_F and stage s+1's
//              RECV_F of one microbatch, or SEND_B and s-1's RECV_B) complete together: NCCL's
//              kernels on both ranks end when the data has moved. Each pair gives the two ranks'
//              offset; the median over pairs joins neighbours, and a walk from rank 0 joins all.
//   order      each rank's executed PP actions in one step (the schedule as run)
//   costs      per stage and compute kind, the median over microbatches and steps of the busy
//              time of each action's kernels, with its spread; per hop, the median transfer (from
//              the later of the two calls to the end of the pair)
//   time       per step, from the first kernel of any rank to the last, on the common clock
//   idle       per rank and step: busy (compute kernels), and idle by cause: warm-up and cool-down
//              (before the rank's first and after its last compute), waiting for a receive (a RECV
//              completes in the gap), host launch gap (else: the next action's host range began
//              after the GPU went idle), and the rest (exposed communication and other)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/measured.hpp"
#include "ir/schedule.hpp"
#include "model/costs.hpp"
#include "sim/timeline.hpp"

namespace ppsched {

struct MeasuredCost {
  std::uint32_t stage = 0;
  ActionKind kind = ActionKind::F;
  double median_us = 0, min_us = 0, max_us = 0;
  std::size_t samples = 0;
};

struct MeasuredHop {
  std::uint32_t from = 0, to = 0;  ///< ranks
  double median_us = 0;
  std::size_t samples = 0;
};

struct RankIdle {
  double busy_us = 0;  ///< compute kernels
  double warmup_cooldown_us = 0;
  double receive_wait_us = 0;
  double launch_gap_us = 0;
  double other_us = 0;  ///< exposed communication, and what no cause above explains
};

/// One action against its (stage, kind)'s median: how far its own GPU time was from it.
struct Deviation {
  std::uint32_t rank = 0, step = 0;
  Action action;
  double measured_us = 0, median_us = 0;
};

/// A SEND and its RECV: indices into ranks[rank].actions.
struct MeasuredPair {
  std::uint32_t send_rank = 0, recv_rank = 0;
  std::size_t send = 0, recv = 0;
};

struct TraceAnalysis {
  std::vector<MeasuredRank> ranks;      ///< by rank
  std::vector<double> clock_offset_us;  ///< per rank: subtract from its times for rank 0's clock
  std::vector<MeasuredPair> pairs;      ///< the SEND/RECV pairs the offsets rest on
  std::vector<std::uint64_t> steps;     ///< the profiled steps every rank has (ProfilerStep numbers)
  Schedule executed;                    ///< each rank's actions in the first of them, as run
  bool same_order_every_step = true;
  std::vector<MeasuredCost> costs;  ///< by stage, then kind
  std::vector<MeasuredHop> hops;
  std::vector<double> iteration_us;  ///< per step
  double median_iteration_us = 0;
  std::vector<RankIdle> idle;         ///< per rank, averaged over the steps
  std::vector<Deviation> deviations;  ///< the largest few, largest first
  /// The first step as run, as the simulator's views draw a run: each action of `executed` from
  /// its GPU span (its host range when no kernel was found), on the common clock from the step's
  /// first kernel; FSDP and gradient-reduction actions on the compute track.
  Timeline first_step;
};

/// Puts the ranks' traces together. Throws UserError naming the file and what is wrong: ranks
/// disagreeing on the world size, a rank twice or missing, a step one rank profiled and another
/// did not, no step all ranks share.
TraceAnalysis analyze_traces(std::vector<MeasuredRank> ranks);

/// The cost model of the measured costs, for `stages` stages (kinds not measured stay 0; B is
/// I + W where only those were measured).
CostModel measured_cost_model(const TraceAnalysis& a, std::uint32_t stages);

/// `executed` without its communication and FSDP actions: the compute-only order, as a
/// schedule CSV holds it for `simulate`.
Schedule compute_only(const Schedule& executed);

}  // namespace ppsched
