// Which runtime executes the schedule: the time model a report's numbers describe.
//
//   pytorch  what PyTorch's _PipelineScheduleRuntime (torchtitan's CSV path) executes. A compute-only
//            schedule is first lowered with PyTorch's runtime recipe (unshard/reshard, reduce-grad,
//            send/recv, passes/passes.hpp lower_runtime); a schedule that already has SEND/RECV runs as
//            written. Each SEND and RECV is issued on the rank's communication queue in program
//            order (PyTorch posts isend/irecv as it reaches them), a RECV completes when its SEND
//            has been reached too, and a compute action waits for the RECVs it consumes (PyTorch
//            waits on the receive's work right before the forward or backward); sends never hold
//            up compute.
//   ideal    the schedule as given: a compute-only one moves data implicitly, after the producing
//            action plus the transfer time, with no queue to wait in. What a runtime with perfect
//            overlap and no ordering constraints would reach: a lower bound.
//
// The default is pytorch: every schedule ppsched reads or writes is meant for PyTorch. The
// runtime-models issue adds more (megatron); each is a documented model, never a per-family factor.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "ir/schedule.hpp"

namespace ppsched {

enum class Runtime : std::uint8_t { PyTorch, Ideal };

/// "pytorch", "ideal".
std::string_view runtime_name(Runtime r);
/// The runtime a name (case-insensitive) names; nullopt for none.
std::optional<Runtime> runtime_from_name(std::string_view name);
/// Every name, in the order the help lists them.
std::vector<std::string_view> runtime_names();
/// One line for reports: what the numbers describe.
std::string_view runtime_summary(Runtime r);

/// Whether the runtime lowers `s` before running it (pytorch, on a compute-only schedule).
bool runtime_lowers(Runtime r, const Schedule& s);

/// The schedule the runtime executes: `s` lowered with PyTorch's runtime recipe when
/// runtime_lowers says so, else `s`. Throws PassError where PyTorch's passes reject `s`.
Schedule schedule_as_run(const Schedule& s, Runtime r);

}  // namespace ppsched
