// Which runtime executes the schedule, and how its iterations meet: the time model a report's
// numbers describe (docs/manual.md, "Runtime models", has each model's equations and sources).
//
//   pytorch   what PyTorch's _PipelineScheduleRuntime (torchtitan's CSV path) executes. A compute-only
//             schedule is first lowered with PyTorch's runtime recipe (unshard/reshard, reduce-grad,
//             send/recv, passes/passes.hpp lower_runtime); a schedule that already has SEND/RECV runs as
//             written. Each SEND and RECV is issued on the rank's communication queue in program
//             order (PyTorch posts isend/irecv as it reaches them), a RECV completes when its SEND
//             has been reached too, and a compute action waits for the RECVs it consumes (PyTorch
//             waits on the receive's work right before the forward or backward); sends never hold
//             up compute.
//   ideal     the schedule as given: a compute-only one moves data implicitly, after the producing
//             action plus the transfer time, with no queue to wait in. What a runtime with perfect
//             overlap and no ordering constraints would reach: a lower bound.
//   megatron  what Megatron-LM executes (sim/megatron.hpp): its own schedules with synchronous
//             p2p calls, or the Zero Bubble runtime with asynchronous ones, each call costing the
//             compute stream a calibrated overhead (RuntimeParams).
//
// The default is pytorch: every schedule ppsched reads or writes is meant for PyTorch. Each runtime
// is a documented model, never a per-family factor.
//
// The optimizer decides what one iteration costs: sync (PyTorch's and Megatron's default: every
// iteration ends in a synchronizing optimizer step) pays the makespan; post-validated (the Zero
// Bubble runtime overlaps consecutive iterations and validates the step afterwards) pays the
// steady-state period, the longest rank span (last compute end - first compute start).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "ir/schedule.hpp"
#include "model/runtime_params.hpp"
#include "passes/passes.hpp"
#include "sim/analysis.hpp"
#include "sim/leaf_census.hpp"
#include "sim/memory.hpp"
#include "sim/timed.hpp"

namespace ppsched {

enum class Runtime : std::uint8_t { PyTorch, Ideal, Megatron };

/// "pytorch", "ideal", "megatron".
std::string_view runtime_name(Runtime r);
/// The runtime a name (case-insensitive) names; nullopt for none.
std::optional<Runtime> runtime_from_name(std::string_view name);
/// Every name, in the order the help lists them.
std::vector<std::string_view> runtime_names();
/// One line for reports: what the numbers describe.
std::string_view runtime_summary(Runtime r);

/// How consecutive iterations meet, which decides what one iteration costs.
enum class Optimizer : std::uint8_t {
  Sync,           ///< every iteration ends in a synchronizing optimizer step: the makespan
  PostValidated,  ///< iterations overlap (Zero Bubble's post-validation): the longest rank span
};
std::string_view optimizer_name(Optimizer o);  // "sync", "post-validated"
std::optional<Optimizer> optimizer_from_name(std::string_view name);
/// One line for reports: what the iteration time is.
std::string_view optimizer_summary(Optimizer o);

/// What one iteration costs under `o`: the makespan, or the longest rank span.
double iteration_time(const SimAnalysis& a, Optimizer o);

/// Whether the runtime lowers `s` before running it (pytorch, on a compute-only schedule).
bool runtime_lowers(Runtime r, const Schedule& s);

/// The schedule the runtime executes: `s` lowered with PyTorch's runtime recipe and `keywords`
/// when runtime_lowers says so; for megatron `s` without its SEND/RECV (Megatron places its own);
/// else `s`. Throws PassError where PyTorch's passes reject `s`. Commands reach it through
/// prepare_schedule (sim/prepare.hpp), which applies --lower first.
Schedule schedule_as_run(const Schedule& s, Runtime r, const RuntimeLowering& keywords = {});

/// A runtime with its optimizer and, for megatron, its calibrated figures.
struct RuntimeModel {
  Runtime runtime = Runtime::PyTorch;
  Optimizer optimizer = Optimizer::Sync;
  RuntimeParams params = megatron_a100_params();
};

/// Times `run` (schedule_as_run's result) under `model`. With `timeline` the timeline is built
/// and returned through it; without, the run may skip it (simulate_aggregates) where the model
/// allows, and reads `census` (of `run`) where one is given. Throws TimedDeadlock when the
/// schedule cannot finish.
SimAnalysis simulate_runtime(const Schedule& run, const std::vector<std::uint32_t>& stage_to_rank,
                             const TimedOptions& opt, const MemoryModel& memory, const RuntimeModel& model,
                             Timeline* timeline = nullptr, const LeafCensus* census = nullptr);

}  // namespace ppsched
