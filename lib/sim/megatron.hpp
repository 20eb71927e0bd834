// The megatron runtime model: how Megatron-LM executes a compute-only schedule, and what its
// point-to-point communication costs (docs/manual.md, "Runtime models", gives the equations and
// their sources).
//
// Megatron-LM has two ways to run a pipeline, and which one runs decides how its sends and
// receives are issued:
//   synchronous  its own schedules (schedules.py: forward_backward_pipelining_without_interleaving
//                and _with_interleaving), for a schedule whose backward is fused (B) under the
//                synchronous optimizer. Between steps the rank makes one p2p call (one
//                batch_isend_irecv: the step's sends and the next step's receives) and waits for
//                all of it before it goes on. A step is one compute action, except that with
//                several stages per rank a forward and the backward right after it are one step
//                (the interleaved schedule's steady state sends and receives once per pair).
//   asynchronous the Zero Bubble runtime (--enable-zb-runtime), the only one that runs a split
//                backward (I and W) or validates the optimizer step after the fact. Between two
//                compute actions the rank makes one call (the earlier one's sends, the later
//                one's receives) and does not wait for it: a compute action waits, on the GPU, for
//                the transfers it consumes.
// In both, a transfer starts when both of its calls have been issued (NCCL's rendezvous for
// messages this large) and takes the link's latency + bytes / bandwidth (model/comm.hpp); each
// call costs the compute stream RuntimeParams::p2p_call_overhead_us (after the wait when
// synchronous, at the issue when not).
//
// The result is a Timeline of the schedule's actions (compute only: the transfers are implicit, as
// under the ideal model), so every view reads it the same way.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/schedule.hpp"
#include "model/runtime_params.hpp"
#include "sim/runtime.hpp"
#include "sim/timed.hpp"

namespace ppsched {

/// Which of Megatron-LM's executors runs `s` under optimizer `o` (see above).
enum class MegatronPath : std::uint8_t { Synchronous, ZeroBubbleRuntime };
MegatronPath megatron_path(const Schedule& s, Optimizer o);

/// Simulates compute-only `s` (SEND/RECV actions are refused with UserError: Megatron
/// places its own) with placement `stage_to_rank` as Megatron-LM runs it. Costs and transfers come
/// from `opt` (blocking_comms is not used: the path decides). Throws TimedDeadlock when the
/// schedule cannot finish.
Timeline simulate_megatron(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank, const TimedOptions& opt,
                           const RuntimeParams& params, Optimizer optimizer);

}  // namespace ppsched
