// The timed simulator: an exact, deterministic, event-driven replay of a schedule with costs.
//
// Each rank has in-order queues: compute (F, B, I, W, OVERLAP_F_B, UNSHARD, RESHARD,
// REDUCE_GRAD) and comm (SEND_* and RECV_*, in program order, as NCCL runs the point-to-point ops
// of one communicator; the timeline shows sends and receives on their own tracks). One comm
// queue by default; TimedOptions::p2p_queues splits it per direction or per rank pair
// (p2p_queues.hpp). An action starts when its queue is free and what it needs is there:
//   F(s, m)      the input from stage s-1: its F when co-located, else the RECV_F(s, m) on this
//                rank when the schedule has explicit comms, else F(s-1, m)'s end plus the
//                transfer time (implicit comms, for compute-only schedules)
//   I/B(s, m)    F(s, m), and the gradient from stage s+1 the same three ways
//   W(s, m)      I(s, m)
//   SEND_F/B     the compute that produced the data; the transfer starts when both the SEND
//                and its RECV have been reached on their queues and takes the transfer time;
//                both end when it ends (so a RECV posted before a SEND it indirectly depends on
//                deadlocks, as it does on a GPU). That is rendezvous, the default send mode
//                (send_mode.hpp). An eager SEND (TimedOptions::send) does not wait for its RECV:
//                its transfer starts when it is posted and it ends when the transfer does; its
//                RECV ends at the later of its own post and the transfer's end
//   OVERLAP_F_B  everything its sub-actions need; it lasts their summed cost times the
//                overlap factor, and all its sub-actions count as done when it ends
// Ranks that share a device (TimedOptions::device_of_rank) take turns on its compute: a compute
// action whose inputs are there is queued on its device, and the device runs its queue in the
// order the actions became ready (ties: the lower rank first), one at a time, each for its own
// cost. That is how one GPU serves the kernels of several ranks' streams once each kernel fills
// it (measured: docs/bench.md, "GPU"). Comms do not queue.
// With blocking comms every action of a rank runs on its compute stream, in program order
// (PyTorch's runtime: compute waits for its receive).
//
// Linear time: each stream waits on one missing dependency at a time and is woken when it
// arrives (with shared devices, each device's queue adds a log factor). A schedule that cannot finish is reported as
// TimedDeadlock with the stuck heads.
//
// Three more places implement this same timed model: change them with it. aggregate.cpp (the
// figures without a timeline), auto/greedy.cpp (the search's list scheduler, which times what it
// builds) and auto/incremental_times.cpp (the local search's timeline, re-timed move by move). The
// per-action rules they share (duration, busy time, the bubble split) are in timed_rules.hpp;
// which SEND is eager is send_mode.hpp's send_completes_eagerly (the two in lib/auto time
// compute-only schedules, with no SEND or RECV, so the send mode does not reach them).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/schedule.hpp"
#include "model/comm.hpp"
#include "model/costs.hpp"
#include "sim/p2p_queues.hpp"
#include "sim/send_mode.hpp"
#include "sim/timeline.hpp"

namespace ppsched {

struct TimedOptions {
  CostModel costs;
  CommModel comm;
  bool blocking_comms = false;
  /// How a SEND completes: rendezvous (the default) or eager up to a message size (send_mode.hpp);
  /// an eager threshold reads the message sizes from comm.stages.
  SendMode send;
  /// Which SENDs and RECVs of a rank share an in-order queue (p2p_queues.hpp): all of them by
  /// default, as on PyTorch's one communicator per rank.
  P2pQueues p2p_queues = P2pQueues::PerRank;
  /// The device each rank runs on; ranks with the same device share its compute (see above).
  /// Empty, or every rank on a device of its own: no sharing.
  std::vector<std::uint32_t> device_of_rank;
};

/// `ranks` ranks spread over `devices` devices in contiguous blocks, as `ppsched run` spreads
/// them: rank r runs on device r * devices / ranks.
std::vector<std::uint32_t> ranks_on_devices(std::uint32_t ranks, std::uint32_t devices);
/// Whether two ranks of `device_of_rank` share a device.
bool shares_devices(const std::vector<std::uint32_t>& device_of_rank);

/// A schedule the timed simulator cannot finish: each stuck stream's rank, the index of its
/// next action in that rank's program, and what it waits for.
class TimedDeadlock : public std::runtime_error {
 public:
  struct Stuck {
    std::uint32_t rank;
    std::size_t step;
    std::string waiting_for;
    /// The action whose completion (or posting, for a SEND/RECV partner) it waits for; Idle
    /// when it waits for nothing in particular.
    ActionKind waits_kind = ActionKind::Idle;
    std::uint32_t waits_stage = 0, waits_microbatch = 0;
  };
  TimedDeadlock(std::vector<Stuck> stuck, Timeline partial);
  const std::vector<Stuck>& stuck() const { return stuck_; }
  const Timeline& partial() const { return partial_; }

 private:
  std::vector<Stuck> stuck_;
  Timeline partial_;
};

/// Simulates `s` with stage placement `stage_to_rank` (indexed by stage, covering every stage).
Timeline simulate_timed(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank, const TimedOptions& opt);

/// Whether `s` finishes, without computing a single time: the same run as simulate_timed with
/// the timeline left out (whether an action can run depends on the order of events, never on
/// costs). Empty when it finishes; else the stuck heads, exactly as TimedDeadlock::stuck()
/// lists them for any costs.
std::vector<TimedDeadlock::Stuck> find_stuck(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                             bool blocking_comms = false);
/// The same under the comm options of `opt` (blocking comms, the send mode and the message sizes
/// it compares); its costs are not read.
std::vector<TimedDeadlock::Stuck> find_stuck(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                             const TimedOptions& opt);

}  // namespace ppsched
