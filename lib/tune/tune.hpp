// Which schedule to run: every family that can run the configuration (and the automatic schedule)
// is synthesized for each microbatch count, simulated with the same timed model and memory
// accounting as `ppsched simulate`, and ranked: fitting schedules by iteration time, then those
// over the memory cap, then those that cannot run, each with a one-line verdict.
//
// The engine does not read files: the caller gives, for each placement a trial needs, the costs
// and memory model of that placement (tune_schedules asks once per distinct placement). The
// text and JSON faces of the result are in report/tune_report.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/schedule.hpp"
#include "sim/sim_inputs.hpp"

namespace ppsched {

struct TuneRequest {
  std::uint32_t ranks = 0;
  /// Exactly one of the two: one microbatch count, or a global batch whose every divisor is a
  /// count to try (costs and activation sizes are then per sample and scale with G/m).
  std::uint32_t microbatches = 0;
  std::uint32_t global_batch = 0;
  double memory_cap = 0;              ///< 0: none
  std::vector<std::string> families;  ///< names, aliases or "auto"; empty: tune's default set and auto
  double time_budget_s = 1.0;         ///< of each automatic search
};

/// One configuration tried and what the simulator said of it.
struct TuneTrial {
  std::string family;  ///< the registry's name, or "auto"
  std::uint32_t stages_per_rank = 1;
  std::uint32_t microbatches = 0;
  bool ran = false;   ///< synthesized and finished in simulation
  bool fits = false;  ///< ran, and its peak fits under the cap
  double makespan = 0, bubble = 0, peak = 0, comm_wait = 0;
  std::string note;  ///< why it cannot run, or where auto's schedule came from
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

/// The trials of a request, unevaluated: per count, per family, Interleaved-style families with 2
/// to 4 stages per rank, auto with 1 and 2. Throws std::invalid_argument for an unknown family.
std::vector<TuneTrial> tune_trials(const TuneRequest& request);

/// The simulator's inputs for one placement (stage -> rank), with costs and sizes per microbatch
/// (per sample with a global batch); nullopt stops the tuning (the caller has said why).
using TuneInputsFor = std::function<std::optional<SimInputs>(const std::vector<std::uint32_t>& stage_to_rank)>;

/// Synthesizes, simulates and ranks the trials of `request` (tune_trials's); nullopt when
/// `inputs_for` failed.
std::optional<TuneResult> tune_schedules(const TuneRequest& request, std::vector<TuneTrial> trials,
                                         const TuneInputsFor& inputs_for);

/// One line on a trial against the best: "best", "+4.2% time, more bubble (...)", "over the cap:
/// ...", "cannot run: ...".
std::string tune_verdict(const TuneTrial& trial, const TuneTrial& best, double memory_cap);

}  // namespace ppsched
