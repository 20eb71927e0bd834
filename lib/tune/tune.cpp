#include "tune/tune.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "sim/aggregate.hpp"
#include "synth/auto/auto_schedule.hpp"
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

// Evaluates trials, asking for each distinct placement's inputs once.
class Tuner {
 public:
  Tuner(const TuneRequest& request, const TuneInputsFor& inputs_for) : req_(request), inputs_for_(inputs_for) {}

  // Fills the trial's results; false when the inputs could not be had.
  bool evaluate(TuneTrial& t) {
    const PlacementStyle style =
        is_auto_schedule(t.family) ? auto_placement(t.stages_per_rank) : find_family(t.family)->placement;
    const Placement placement = Placement::for_shape(style, req_.ranks, t.stages_per_rank);
    const SimInputs* base = inputs(placement.stage_to_rank);
    if (!base) return false;
    // With a global batch the costs and sizes are per sample: a microbatch of G/m samples costs
    // and holds G/m times as much (a linear model; small microbatches run less efficiently on a
    // real GPU, which a measured cost table per microbatch size would show).
    SimInputs scaled;
    const SimInputs* in = base;
    if (req_.global_batch) {
      const double samples = double(req_.global_batch) / t.microbatches;
      scaled = *base;
      for (auto& stage : scaled.sim.costs.per_stage)
        for (double& c : stage) c *= samples;
      scaled.memory = base->memory.scaled(samples, req_.ranks, placement.num_stages());
      in = &scaled;
    }
    try {
      t.schedule = build(t, *in);
    } catch (const std::invalid_argument& e) {  // SynthError, or auto's "no schedule fits"
      t.note = e.what();
      return true;
    }
    try {
      SimAnalysis a = simulate_aggregates(t.schedule, t.schedule.placement.stage_to_rank, in->sim, in->memory);
      t.ran = true;
      t.makespan = a.makespan;
      t.bubble = a.bubble_global;
      t.peak = a.memory.max_peak();
      for (const RankUsage& u : a.ranks) t.comm_wait += u.comm_wait;
      t.fits = fits_under_cap(t.peak, req_.memory_cap);
    } catch (const TimedDeadlock&) {
      t.note = "its schedule does not finish";
    }
    return true;
  }

 private:
  Schedule build(TuneTrial& t, const SimInputs& in) const {
    if (is_auto_schedule(t.family)) {
      AutoParams p;
      p.ranks = req_.ranks;
      p.microbatches = t.microbatches;
      p.stages_per_rank = t.stages_per_rank;
      p.memory_cap = req_.memory_cap;
      p.sim = in.sim;
      p.memory = in.memory;
      p.time_budget_s = req_.time_budget_s;
      AutoResult r = auto_schedule(p);
      t.note = r.best.origin;
      return std::move(r.schedule);
    }
    SynthParams p;
    p.ranks = req_.ranks;
    p.microbatches = t.microbatches;
    p.stages_per_rank = t.stages_per_rank;
    return synthesize(t.family, p);
  }

  const SimInputs* inputs(const std::vector<std::uint32_t>& stage_to_rank) {
    auto it = inputs_.find(stage_to_rank);
    if (it == inputs_.end()) {
      std::optional<SimInputs> in = inputs_for_(stage_to_rank);
      if (!in) return nullptr;
      it = inputs_.emplace(stage_to_rank, std::move(*in)).first;
    }
    return &it->second;
  }

  const TuneRequest& req_;
  const TuneInputsFor& inputs_for_;
  std::map<std::vector<std::uint32_t>, SimInputs> inputs_;
};

// Fitting by time (then peak), then over the cap by time, then the ones that did not run.
void rank_trials(std::vector<TuneTrial>& trials) {
  auto group = [](const TuneTrial& t) { return t.ran ? (t.fits ? 0 : 1) : 2; };
  std::stable_sort(trials.begin(), trials.end(), [&](const TuneTrial& a, const TuneTrial& b) {
    if (group(a) != group(b)) return group(a) < group(b);
    if (!a.ran) return false;
    if (a.makespan != b.makespan) return a.makespan < b.makespan;
    return a.peak < b.peak;
  });
}

}  // namespace

std::vector<std::uint32_t> tune_microbatch_counts(const TuneRequest& request) {
  if ((request.microbatches == 0) == (request.global_batch == 0))
    throw std::invalid_argument("give either --microbatches M or --global-batch G");
  if (request.microbatches) return {request.microbatches};
  std::vector<std::uint32_t> counts;
  for (std::uint32_t m = 1; m <= request.global_batch; ++m)
    if (request.global_batch % m == 0) counts.push_back(m);
  return counts;
}

std::vector<TuneTrial> tune_trials(const TuneRequest& request) {
  const std::vector<std::uint32_t> counts = tune_microbatch_counts(request);
  const std::vector<std::string> families = request.families.empty() ? default_families() : request.families;
  for (const std::string& f : families)
    if (!is_auto_schedule(f) && !find_family(f))
      throw std::invalid_argument("--families: unknown schedule '" + f + "' (see ppsched list)");
  std::vector<TuneTrial> out;
  auto trial = [&](std::string family, std::uint32_t v, std::uint32_t m) {
    TuneTrial t;
    t.family = std::move(family);
    t.stages_per_rank = v;
    t.microbatches = m;
    out.push_back(std::move(t));
  };
  for (std::uint32_t m : counts)
    for (const std::string& name : families) {
      if (is_auto_schedule(name)) {
        for (std::uint32_t v : {1u, 2u}) trial("auto", v, m);
        continue;
      }
      const Family& f = *find_family(name);
      if (f.fixed_stages_per_rank)
        trial(std::string(f.name), f.default_stages_per_rank, m);
      else
        for (std::uint32_t v = 2; v <= 4; ++v) trial(std::string(f.name), v, m);
    }
  return out;
}

std::optional<TuneResult> tune_schedules(const TuneRequest& request, std::vector<TuneTrial> trials,
                                         const TuneInputsFor& inputs_for) {
  TuneResult result;
  result.trials = std::move(trials);
  Tuner tuner(request, inputs_for);
  for (TuneTrial& t : result.trials)
    if (!tuner.evaluate(t)) return std::nullopt;
  rank_trials(result.trials);
  return result;
}

std::string tune_verdict(const TuneTrial& t, const TuneTrial& best, double memory_cap) {
  if (!t.ran) return "cannot run: " + t.note.substr(0, t.note.find('\n'));
  if (!t.fits) return fmt::format("over the cap: peak {:.4g} > {:.4g}", t.peak, memory_cap);
  if (&t == &best) return "best";
  std::string why = fmt::format("{:+.1f}% time", 100.0 * (t.makespan / best.makespan - 1.0));
  if (t.bubble > best.bubble + 1e-9)
    why += fmt::format(", more bubble ({:.1f}% vs {:.1f}%)", 100 * t.bubble, 100 * best.bubble);
  if (t.comm_wait > best.comm_wait * 1.01 + 1e-9) why += ", more comm wait";
  if (t.makespan == best.makespan) why = fmt::format("ties the best; peak {:.4g} vs {:.4g}", t.peak, best.peak);
  return why;
}

}  // namespace ppsched
