#include "tune/tune.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

#include "auto/auto_schedule.hpp"
#include "ir/action.hpp"
#include "ir/rank_halves.hpp"
#include "ir/user_error.hpp"
#include "sim/runtime_cost.hpp"
#include "synth/size_estimate.hpp"
#include "synth/synth.hpp"

namespace ppsched {

namespace {

// The families of the registry's default set (Family::tune_default), then the automatic schedule.
std::vector<std::string> default_families() {
  std::vector<std::string> out;
  for (std::string_view name : tune_default_families()) out.emplace_back(name);
  out.emplace_back("auto");
  return out;
}

Placement placement_of_trial(const TuneRequest& req, const TuneTrial& t) {
  const PlacementStyle style =
      is_auto_schedule(t.family) ? auto_placement(t.stages_per_rank) : find_family(t.family)->placement;
  return Placement::for_shape(style, req.ranks, t.stages_per_rank);
}

using InputsKey = std::pair<std::vector<std::uint32_t>, std::uint32_t>;  // placement, microbatch size

// How a trial's schedule is prepared for the request's runtime, as simulate prepares one.
Preparation preparation_of(const TuneRequest& req, const TuneTrial& t) {
  Preparation how;
  how.runner = Runner::Runtime;
  how.runtime = req.runtime;
  how.keywords = req.keywords;
  if (!is_auto_schedule(t.family)) how.family = t.family;
  return how;
}

// The nominal speed the automatic search counts its budget in (auto's WorkBudget), and the passes
// over a trial's schedule tune_work counts (measured: 1F1B on 64 ranks and 20,000 microbatches
// under the PyTorch runtime, 11.5M actions as estimated, takes 3.9 s on one core).
constexpr double kNominalActionsPerSecond = 1e7;
constexpr double kPassesPerTrial = 3;

// An auto trial costs each schedule its ranking weighs (ranked_schedules), besides its search.
double trial_work_s(const TuneRequest& req, const TuneTrial& t) {
  const double schedules = is_auto_schedule(t.family) ? double(ranked_schedules(t.stages_per_rank)) : 1.0;
  return estimate_schedule_size(req.ranks, t.stages_per_rank, t.microbatches, req.runtime == Runtime::PyTorch).actions *
         kPassesPerTrial * schedules / kNominalActionsPerSecond;
}

// How the request ranks its trials (sim/runtime_cost.hpp), for a trial prepared as `how`.
RankingRule ranking_rule(const TuneRequest& req, const Preparation& how) {
  RankingRule rule;
  rule.how = how;
  rule.model = RuntimeModel{req.runtime, req.optimizer, req.runtime_params};
  rule.blocking_comms = req.blocking_comms;
  rule.liveness = req.liveness;
  rule.memory_cap = req.memory_cap;
  return rule;
}

// Synthesizes (or searches), prepares for the runtime and simulates one trial with its inputs.
void evaluate(const TuneRequest& req, double search_s, TuneTrial& t, const SimInputs& in) {
  const Preparation how = preparation_of(req, t);
  try {
    how.check_keywords();
  } catch (const UserError& e) {
    t.note = e.what();
    return;
  }
  Schedule built;
  try {
    if (is_auto_schedule(t.family)) {
      AutoParams p;
      p.ranks = req.ranks;
      p.microbatches = t.microbatches;
      p.stages_per_rank = t.stages_per_rank;
      p.memory_cap = req.memory_cap;
      p.sim = in.sim;
      // Under a slot cap the search counts slots: the byte model that does (slot_memory_model).
      p.memory = req.liveness ? slot_memory_model(req.ranks * t.stages_per_rank) : in.memory;
      p.time_budget_s = search_s;
      p.optimizer = req.optimizer;           // it searches for what the ranking compares
      p.ranked_by = ranking_rule(req, how);  // and its answer is ranked as the table ranks it
      AutoResult r = auto_schedule(p);
      t.note = r.best.origin;
      built = std::move(r.schedule);
    } else {
      built = tune_schedule_of(req, t);
    }
  } catch (const UserError& e) {  // SynthError, or auto's "no schedule fits"
    t.note = e.what();
    return;
  }
  if (in.priced) {
    const auto stages = static_cast<std::uint32_t>(in.sim.costs.per_stage.size());
    if (const std::optional<MissingCost> gap = first_missing_cost(compute_kinds_by_stage(built, stages), *in.priced)) {
      // The table priced F on every stage (inputs_for checked), so the gap is a kind: say which run
      // leaves it out.
      const ActionKind k = gap->kind.value_or(ActionKind::F);
      const char* why = k == ActionKind::B ? " (a run with a split backward times I and W, not B)"
                        : k == ActionKind::I || k == ActionKind::W
                            ? " (a run with a fused backward times B, not I and W)"
                            : "";
      t.note =
          fmt::format("the cost table times no {} on stage {}, which it runs{}: add those rows, or pass --fill unit",
                      kind_name(k), gap->stage, why);
      return;
    }
  }
  RuntimeCost cost = cost_under_runtime(std::move(built), ranking_rule(req, how), in.sim, in.memory);
  t.ran = cost.ran;
  t.fits = cost.fits;
  t.iteration_time = cost.iteration_time;
  t.bubble = cost.bubble;
  t.peak = cost.peak;
  t.comm_wait = cost.comm_wait;
  if (!cost.ran) t.note = cost.note;
  if (is_auto_schedule(t.family)) t.schedule = std::move(cost.given);  // a family's is rebuilt on demand
}

// Fitting by time (then peak), then over the cap by time, then the ones that did not run.
void rank_trials(std::vector<TuneTrial>& trials) {
  auto group = [](const TuneTrial& t) { return t.ran ? (t.fits ? 0 : 1) : 2; };
  std::stable_sort(trials.begin(), trials.end(), [&](const TuneTrial& a, const TuneTrial& b) {
    if (group(a) != group(b)) return group(a) < group(b);
    if (!a.ran) return false;
    if (a.iteration_time != b.iteration_time) return a.iteration_time < b.iteration_time;
    return a.peak < b.peak;
  });
}

}  // namespace

std::vector<std::uint32_t> tune_microbatch_counts(const TuneRequest& request) {
  if ((request.microbatches == 0) == (request.global_batch == 0))
    throw UserError("give either --microbatches M or --global-batch G");
  if (request.microbatches) return {request.microbatches};
  std::vector<std::uint32_t> counts;
  for (std::uint32_t m = 1; m <= request.global_batch; ++m)
    if (request.global_batch % m == 0 && m >= request.min_microbatches &&
        (request.max_microbatches == 0 || m <= request.max_microbatches))
      counts.push_back(m);
  return counts;
}

std::vector<std::uint32_t> tune_shapes(const TuneRequest& request) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t v : request.stages_per_rank) {
    const std::uint64_t stages = std::uint64_t(request.ranks) * v;
    if (v == 0 || (request.max_stages && stages > request.max_stages)) continue;
    if (request.only_stages && stages != request.only_stages) continue;
    out.push_back(v);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<TuneTrial> tune_trials(const TuneRequest& request) {
  const std::vector<std::uint32_t> counts = tune_microbatch_counts(request);
  const std::vector<std::string> families = request.families.empty() ? default_families() : request.families;
  for (const std::string& f : families)
    if (!is_auto_schedule(f) && !find_family(f))
      throw UserError("--families: unknown schedule '" + f + "' (see ppsched list)");
  const std::vector<std::uint32_t> shapes = tune_shapes(request);
  if (shapes.empty())
    throw UserError(fmt::format(
        "no pipeline shape to try: stages per rank {} on {} ranks {}", fmt::join(request.stages_per_rank, ", "),
        request.ranks,
        request.only_stages ? fmt::format("never give the {} stages the costs describe", request.only_stages)
                            : fmt::format("need more than the {} stages the model's blocks, embedding and head allow",
                                          request.max_stages)));
  auto tried = [&](std::uint32_t v) { return std::find(shapes.begin(), shapes.end(), v) != shapes.end(); };
  std::vector<TuneTrial> out;
  auto trial = [&](std::string family, std::uint32_t v, std::uint32_t m) {
    TuneTrial t;
    t.family = std::move(family);
    t.stages_per_rank = v;
    t.microbatches = m;
    t.microbatch_size = request.global_batch ? request.global_batch / m : request.microbatch_size;
    out.push_back(std::move(t));
  };
  for (std::uint32_t m : counts)
    for (const std::string& name : families) {
      if (is_auto_schedule(name)) {
        for (std::uint32_t v : {1u, 2u})
          if (tried(v)) trial("auto", v, m);
        continue;
      }
      const Family& f = *find_family(name);
      if (f.fixed_stages_per_rank) {
        if (tried(f.default_stages_per_rank)) trial(std::string(f.name), f.default_stages_per_rank, m);
      } else {
        for (std::uint32_t v : shapes)
          if (v >= 2) trial(std::string(f.name), v, m);
      }
    }
  return out;
}

TuneWork tune_work(const TuneRequest& request, const std::vector<TuneTrial>& trials) {
  TuneWork w;
  w.budget_s = request.time_budget_s > 0 ? request.time_budget_s : kDefaultTuneBudget;
  double largest_s = -1;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    const double s = trial_work_s(request, trials[i]);
    w.trials_s += s;
    if (s > largest_s) largest_s = s, w.largest = i;
    if (is_auto_schedule(trials[i].family)) ++w.searches;
  }
  if (w.trials_s > w.budget_s) {
    const TuneTrial& big = trials[w.largest];
    const std::size_t counts = tune_microbatch_counts(request).size();
    throw UserError(fmt::format(
        "tune would take about {:.3g} s of work (at a nominal 10M simulated actions/s) for its {} trials, over "
        "{} {:.3g} s; the largest, {} at v={} m={}, about {:.3g} s. Narrow it: fewer --families or "
        "--stages-per-rank, {}, or --runtime ideal (nothing to lower); or raise --time-budget",
        w.trials_s, trials.size(), request.time_budget_s > 0 ? "--time-budget" : "the default budget of", w.budget_s,
        big.family, big.stages_per_rank, big.microbatches, largest_s,
        request.global_batch ? fmt::format("a --global-batch with fewer divisors (it has {})", counts)
                             : std::string("fewer --microbatches")));
  }
  if (w.searches) {
    w.search_s = (w.budget_s - w.trials_s) / double(w.searches);
    if (request.time_budget_s <= 0) w.search_s = std::min(w.search_s, 1.0);
    w.search_s = std::max(w.search_s, 1e-3);  // the search's first round, at the least
  }
  return w;
}

SimInputs per_sample_inputs(const SimInputs& per_sample, double samples, std::size_t ranks, std::uint32_t stages) {
  SimInputs out = per_sample;
  for (auto& stage : out.sim.costs.per_stage)
    for (double& c : stage) c *= samples;
  out.memory = per_sample.memory.scaled(samples, ranks, stages);
  return out;
}

std::optional<TuneResult> tune_schedules(const TuneRequest& request, std::vector<TuneTrial> trials,
                                         const TuneInputsFor& inputs_for) {
  const double search_s = tune_work(request, trials).search_s;
  // Every input first, in trial order and on this thread: the caller's reader reports problems.
  std::map<InputsKey, SimInputs> inputs;
  std::vector<const SimInputs*> of_trial(trials.size());
  for (std::size_t i = 0; i < trials.size(); ++i) {
    InputsKey key{placement_of_trial(request, trials[i]).stage_to_rank, trials[i].microbatch_size};
    auto it = inputs.find(key);
    if (it == inputs.end()) {
      std::optional<SimInputs> in = inputs_for(key.first, key.second);
      if (!in) return std::nullopt;
      it = inputs.emplace(std::move(key), std::move(*in)).first;
    }
    of_trial[i] = &it->second;
  }
  // Then the trials, independent of each other, on every hardware thread.
  // An exception that leaves a std::thread's function ends the process (std::terminate, SIGABRT):
  // the first one a trial throws (out of memory, say) stops the others and is thrown again here,
  // on the caller's thread, after every worker has joined.
  std::atomic<std::size_t> next{0};
  std::mutex failed_mutex;
  std::exception_ptr failed;
  const unsigned threads = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), trials.size()));
  auto work = [&]() noexcept {
    // With a trial on every core, a trial's passes and simulation stay on its thread (rank_halves.hpp).
    std::optional<OneThreadHere> alone;
    if (threads > 1) alone.emplace();
    try {
      for (std::size_t i; (i = next.fetch_add(1)) < trials.size();)
        evaluate(request, search_s, trials[i], *of_trial[i]);
    } catch (...) {
      next.store(trials.size());
      const std::lock_guard<std::mutex> lock(failed_mutex);
      if (!failed) failed = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  try {
    for (unsigned k = 1; k < threads; ++k) pool.emplace_back(work);
  } catch (...) {  // no thread to start (out of memory, or of threads): fewer workers
  }
  work();
  for (std::thread& th : pool) th.join();
  if (failed) std::rethrow_exception(failed);
  TuneResult result;
  result.trials = std::move(trials);
  rank_trials(result.trials);
  return result;
}

Schedule tune_schedule_of(const TuneRequest& request, const TuneTrial& trial) {
  if (is_auto_schedule(trial.family)) return trial.schedule;
  SynthParams p;
  p.ranks = request.ranks;
  p.microbatches = trial.microbatches;
  p.stages_per_rank = trial.stages_per_rank;
  return synthesize(trial.family, p);
}

std::string tune_verdict(const TuneTrial& t, const TuneTrial& best, double memory_cap,
                         const std::function<std::string(double)>& format_memory) {
  if (!t.ran) return "cannot run: " + t.note.substr(0, t.note.find('\n'));
  if (!t.fits) return "over the cap: peak " + format_memory(t.peak) + " > " + format_memory(memory_cap);
  if (&t == &best) return "best";
  if (t.iteration_time == best.iteration_time)
    return "ties the best; peak " + format_memory(t.peak) + " vs " + format_memory(best.peak);
  std::string why = fmt::format("{:+.1f}% time", 100.0 * (t.iteration_time / best.iteration_time - 1.0));
  if (t.bubble > best.bubble + 1e-9)
    why += fmt::format(", more bubble ({:.1f}% vs {:.1f}%)", 100 * t.bubble, 100 * best.bubble);
  if (t.comm_wait > best.comm_wait * 1.01 + 1e-9) why += ", more comm wait";
  return why;
}

}  // namespace ppsched
