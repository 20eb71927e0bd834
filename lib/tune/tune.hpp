// Which schedule to run: every family that can run the configuration (and the automatic schedule)
// is synthesized for each shape (stages per rank) and microbatch count, run through the same
// runtime model and memory accounting as `ppsched simulate`, and ranked: fitting schedules by
// iteration time, then those over the memory cap, then those that cannot run, each with a one-line
// verdict.
//
// The engine does not read files: the caller gives, for each placement and microbatch size a
// trial needs, the costs and memory model (tune_schedules asks once per distinct pair, before any
// trial runs). Trials run in parallel, one per hardware thread. The text and JSON faces of the
// result are in report/tune_report.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/schedule.hpp"
#include "sim/activation_liveness.hpp"
#include "sim/prepare.hpp"
#include "sim/runtime.hpp"
#include "sim/sim_inputs.hpp"

namespace ppsched {

struct TuneRequest {
  std::uint32_t ranks = 0;
  /// Exactly one of the two: one microbatch count (of `microbatch_size` samples each), or a
  /// global batch whose every divisor m is a count to try, with microbatches of G/m samples.
  std::uint32_t microbatches = 0;
  std::uint32_t global_batch = 0;
  std::uint32_t microbatch_size = 1;  ///< samples per microbatch with `microbatches`
  /// With `global_batch`, only the counts in [min_microbatches, max_microbatches] (0: no bound).
  std::uint32_t min_microbatches = 0, max_microbatches = 0;
  double memory_cap = 0;  ///< 0: none; in the unit `liveness` picks
  /// What a trial's peak and the cap count: nullopt, the byte model of each trial's SimInputs (its
  /// simulated peak); else PyTorch's activation slots per rank at this granularity, from the
  /// trial's order (activation_liveness; the automatic search then runs under slot_memory_model).
  std::optional<LivenessGranularity> liveness;
  std::vector<std::string> families;  ///< names, aliases or "auto"; empty: tune's default set and auto
  /// The stages per rank to try; a family runs at those it supports (single-stage families at 1,
  /// V families at 2, looped multi-stage families at each value >= 2, auto at 1 and 2).
  std::vector<std::uint32_t> stages_per_rank = {1, 2, 4};
  /// The most stages a pipeline may have (a model's blocks + 2: every middle stage holds a block, the
  /// embedding and the head may be stages of their own); 0: no limit.
  std::uint32_t max_stages = 0;
  /// Only pipelines of exactly this many stages (a cost table or stage spec describes one); 0: any.
  std::uint32_t only_stages = 0;
  /// The whole command's budget of work (tune_work): every trial's schedule and the automatic
  /// searches together, in seconds at a nominal 10M simulated actions/s; 0: the default (each
  /// search 1 s, the whole at most kDefaultTuneBudget).
  double time_budget_s = 0;
  Runtime runtime = Runtime::PyTorch;
  /// PyTorch's runtime lowering keywords, for --runtime pytorch (a single-stage family, which
  /// PyTorch builds without them, cannot run with them given).
  LoweringKeywords keywords;
  Optimizer optimizer = Optimizer::Sync;                  ///< which time one iteration costs
  RuntimeParams runtime_params = megatron_a100_params();  ///< the figures of --runtime megatron
  bool blocking_comms = false;
};

/// One configuration tried and what the simulator said of it.
struct TuneTrial {
  std::string family;  ///< the registry's name, or "auto"
  std::uint32_t stages_per_rank = 1;
  std::uint32_t microbatches = 0;
  std::uint32_t microbatch_size = 1;  ///< samples per microbatch
  bool ran = false;                   ///< synthesized and finished in simulation
  bool fits = false;                  ///< ran, and its peak fits under the cap
  /// What one iteration costs under the request's optimizer (the makespan, or the longest rank span).
  /// The peak is the highest rank's, in the request's unit (bytes or microbatches of the byte model,
  /// or PyTorch's activation slots).
  double iteration_time = 0, bubble = 0, peak = 0, comm_wait = 0;
  std::string note;  ///< why it cannot run, or where auto's schedule came from
  /// The compute-only schedule (what torchtitan loads), kept for auto's trials (the search's
  /// answer); a family's is rebuilt on demand by tune_schedule_of.
  Schedule schedule;
};

/// The trials, best first: fitting ones by iteration time (then peak), those over the cap by time,
/// then those that did not run.
struct TuneResult {
  std::vector<TuneTrial> trials;
  bool found() const { return !trials.empty() && trials.front().fits; }
};

/// The microbatch counts a request tries, ascending. Requires exactly one of microbatches and
/// global_batch to be set.
std::vector<std::uint32_t> tune_microbatch_counts(const TuneRequest& request);

/// The stages per rank a request tries, ascending: those of `request.stages_per_rank` whose
/// pipelines the stage limits allow.
std::vector<std::uint32_t> tune_shapes(const TuneRequest& request);

/// The trials of a request, unevaluated: per count, per family, at each stage count it supports.
/// Throws UserError for an unknown family or an empty set of shapes.
std::vector<TuneTrial> tune_trials(const TuneRequest& request);

/// The budget of a request that gives none: the families' trials and the searches, 1 s each, fit
/// in it (the searches share it when they do not).
inline constexpr double kDefaultTuneBudget = 60;

/// What a request's trials cost, counted before any runs, in seconds of work at the nominal
/// 10M simulated actions/s of the automatic search: each trial's schedule as
/// estimate_schedule_size counts it (lowered under --runtime pytorch), about three passes over
/// it (synthesis, preparation, simulation); the automatic searches get what that leaves of the
/// budget, shared (at most 1 s each without a budget). Counted, not timed: the same request gets
/// the same answer on any machine.
struct TuneWork {
  double budget_s = 0;       ///< the request's, or kDefaultTuneBudget
  double trials_s = 0;       ///< every trial's schedule: built, prepared and simulated
  std::size_t searches = 0;  ///< the automatic searches among the trials
  double search_s = 0;       ///< the budget of each of them
  std::size_t largest = 0;   ///< the index of the costliest trial
};

/// The work of `trials` (tune_trials's) under the request's budget. Throws UserError, naming how
/// to narrow the request, when the trials alone would take more than the budget.
TuneWork tune_work(const TuneRequest& request, const std::vector<TuneTrial>& trials);

/// The simulator's inputs for one placement (stage -> rank) and microbatch size; nullopt stops
/// the tuning (the caller has said why).
using TuneInputsFor = std::function<std::optional<SimInputs>(const std::vector<std::uint32_t>& stage_to_rank,
                                                             std::uint32_t microbatch_size)>;

/// Inputs whose costs and sizes are per sample, for a microbatch of `samples` samples: costs and
/// activation sizes times `samples` (a linear model; a model file's roofline is not linear).
SimInputs per_sample_inputs(const SimInputs& per_sample, double samples, std::size_t ranks, std::uint32_t stages);

/// Synthesizes, simulates and ranks the trials of `request` (tune_trials's); nullopt when
/// `inputs_for` failed. Asks tune_work first (and throws its UserError before any input is read).
std::optional<TuneResult> tune_schedules(const TuneRequest& request, std::vector<TuneTrial> trials,
                                         const TuneInputsFor& inputs_for);

/// The compute-only schedule of a trial: auto's as found, a family's synthesized again.
Schedule tune_schedule_of(const TuneRequest& request, const TuneTrial& trial);

/// One line on a trial against the best: "best", "+4.2% time, more bubble (...)", "over the cap:
/// ...", "cannot run: ...". `format_memory` writes a peak or cap in the memory model's unit.
std::string tune_verdict(const TuneTrial& trial, const TuneTrial& best, double memory_cap,
                         const std::function<std::string(double)>& format_memory);

}  // namespace ppsched
