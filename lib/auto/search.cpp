// One automatic search (search.hpp): the loop over the rounds, and the measuring every round shares.
#include "auto/search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "auto/candidate.hpp"
#include "auto/rounds.hpp"
#include "auto/variants.hpp"
#include "ir/user_error.hpp"
#include "sim/memory.hpp"

namespace ppsched::auto_detail {

namespace {

// No schedule of this shape can do better: a rank has all its own work to do, which bounds its
// span, and for the makespan it cannot start before the first microbatch's forwards reach it.
double lower_bound(const Shape& sh, Optimizer objective) {
  double bound = 0;
  for (std::uint32_t r = 0; r < sh.ranks; ++r) {
    double work = 0;
    for (std::uint32_t s : sh.own[r]) work += sh.microbatches * (sh.f[s] + sh.backward[s]);
    const std::uint32_t first = sh.own[r].back();  // its lowest stage
    double reach = 0;
    if (objective == Optimizer::Sync)
      for (std::uint32_t s = 0; s < first; ++s) reach += sh.f[s] + sh.fwd_xfer[s + 1];
    bound = std::max(bound, reach + work);
  }
  return bound;
}

// The families of this shape that the search measures (Family::auto_search_order), in its order.
std::vector<std::string_view> search_families(std::uint32_t stages_per_rank) {
  std::vector<const Family*> chosen;
  for (const Family& f : families())
    if (f.auto_search_order != 0 && f.default_stages_per_rank == stages_per_rank &&
        f.placement == auto_placement(stages_per_rank))
      chosen.push_back(&f);
  std::stable_sort(chosen.begin(), chosen.end(),
                   [](const Family* a, const Family* b) { return a->auto_search_order < b->auto_search_order; });
  std::vector<std::string_view> names;
  for (const Family* f : chosen) names.push_back(f->name);
  return names;
}

// Whether every action is F, I, W or an idle step: what the greedy can replay.
bool only_split_backwards(const Schedule& s) {
  for (const RankProgram& rank : s.ranks)
    for (const Action& a : rank.actions)
      if (!a.is_idle() && a.kind != ActionKind::F && a.kind != ActionKind::I && a.kind != ActionKind::W) return false;
  return true;
}

// The objective first (AutoParams::optimizer), then the other time (under sync: less bubble inside
// the ranks; under post-validated: the iteration that also ends sooner), then memory.
bool better(const AutoCandidate& a, const AutoCandidate& b, Optimizer objective) {
  if (!a.fits) return false;
  if (!b.fits) return true;
  const Optimizer other = objective == Optimizer::Sync ? Optimizer::PostValidated : Optimizer::Sync;
  for (Optimizer o : {objective, other}) {
    const double x = iteration_time(a, o), y = iteration_time(b, o);
    if (std::abs(x - y) > 1e-12 * std::max(1.0, y)) return x < y;
  }
  return a.peak < b.peak - kSameMemory;
}

}  // namespace

Search::Search(const AutoParams& p)
    : p_(p),
      shape_(p),
      budget_(p.time_budget_s),
      bound_(lower_bound(shape_, p.optimizer)),
      cap_(target_caps(p, shape_).front()),
      policies_(greedy_variants(p, shape_)) {
  sp_.ranks = p.ranks;
  sp_.microbatches = p.microbatches;
  families_ = search_families(p.stages_per_rank);
  // Whether every cost is positive (measure_family says why it matters).
  for (std::uint32_t st = 0; st < shape_.stages; ++st)
    for (ActionKind k : {ActionKind::F, ActionKind::I, ActionKind::W, ActionKind::B})
      positive_costs_ &= p.sim.costs.cost(static_cast<std::uint16_t>(st), k) > 0;
}

// The loop owns every gate: a round's row says what it needs (rounds.hpp), and the loop checks it
// here, in one place, before the round starts; inside, a round only asks stop() between
// candidates. The order of the checks matters only for the start a round keeps: after the gates,
// so that a round that does not run keeps none.
AutoResult Search::run() {
  const bool large = double(p_.ranks) * p_.microbatches > kSmallSearch;
  const double gate_scale = large ? kLargeSearchGate : 1.0;
  for (const Round& round : search_rounds()) {
    if (perfect()) break;  // later candidates could only tie
    if (round.applies && !round.applies(*this)) continue;
    if (round.budgeted && budget_.spent()) continue;
    const double gate_left = gate_scale * budget_.left();
    Allowance allowance;
    if (round.pays > 0) {
      const double work = round.work(*this);
      if (work <= 0 || gate_left < round.pays * work) continue;
      allowance.every_candidate = round.pays_for_all <= 0 || gate_left >= round.pays_for_all * work;
    }
    if (round.share > 0)
      allowance.most_work = round.share_of_whole ? round.share * p_.time_budget_s * WorkBudget::kActionsPerSecond
                                                 : round.share * gate_left;
    if (round.keeps_start) keep_start();
    round.run(*this, allowance);
  }
  if (!has_fitting_best()) throw UserError(fmt::format("auto: no schedule fits the memory cap {:.4g}", p_.memory_cap));
  result_.schedule = best_guide_ ? std::move(guides_[*best_guide_].schedule) : std::move(*best_own_);
  return std::move(result_);
}

// Records a candidate. True when it is the best so far: the caller then keeps its schedule
// (keep, or keep_guide for a V pattern, which stays in guides_ for squeezing until the end).
bool Search::consider(AutoCandidate c) {
  const bool best = !has_best() || better(c, result_.best, p_.optimizer);
  if (best) result_.best = c;
  result_.tried.push_back(std::move(c));
  return best;
}
void Search::keep(Schedule s) {
  best_own_ = std::move(s);
  best_guide_.reset();
}
void Search::keep_guide(std::size_t index) {
  whole(index);  // a replay that finished has read it all, so this only makes sure
  best_guide_ = index;
  best_own_.reset();
}

// A candidate that can no longer beat or tie the best so far stops there (it could not be
// chosen, so the result is the same as finishing it). The margin covers rounding in the bound;
// a tie must finish, as the tie-breaks may prefer it.
double Search::mark() const {
  return has_best() && result_.best.fits ? best_time() + 1e-9 * std::max(1.0, best_time()) : kNever;
}

// Nothing can do better than the objective's bound; the margin covers rounding in it.
bool Search::perfect() const {
  const double eps = 1e-9 * std::max(1.0, bound_);
  return has_best() && result_.best.fits && best_time() <= bound_ + eps;
}

// Records a run of the greedy as a candidate, or why it did not finish; true when it is the best
// so far (consider). The greedy's own times are the timed simulator's (compute-only schedule,
// implicit comms), so a finished run needs no second simulation.
bool Search::record_run(AutoCandidate c, const GreedyRun& run, std::string_view unfinished) {
  if (!run.finished) {
    c.why_not =
        run.gave_up
            ? fmt::format("stopped early: cannot {} {:.6g}, the best so far",
                          p_.optimizer == Optimizer::Sync ? "finish by" : "keep every rank's span within", best_time())
            : std::string(unfinished);
    result_.tried.push_back(std::move(c));
    return false;
  }
  c.makespan = run.makespan;
  c.peak = run.peak;
  c.span = run.span;
  judge_fit(c, p_);
  return consider(std::move(c));
}

bool Search::run_greedy(AutoCandidate c, GreedyPolicy pol, std::optional<std::size_t> guide) {
  GreedyRun run = guide ? run_guided(*guide, pol, true) : greedy_run(shape_, pol, mark(), &buffers_);
  budget_.spend(static_cast<double>(run.placed - run.copied));
  if (record_run(std::move(c), run, "the greedy got stuck")) {
    keep(schedule_of(p_, std::move(run.programs)));
  } else {
    recycle(run);
  }
  return run.same_with_shadow_lookahead;
}

void Search::run_variant(const GreedyPolicy& pol) {
  AutoCandidate c;
  c.origin = describe(pol, p_.stages_per_rank);
  run_greedy(std::move(c), pol);
}

void Search::measure_next_family() { measure_family(families_[families_measured_++]); }

// A handcrafted family of this shape: the result is never slower than the best of them that fits
// (unless a candidate before it is already perfect).
void Search::measure_family(std::string_view name) {
  if (perfect()) return;
  try {
    const std::string family(find_family(name)->name);
    // A V pattern lives in guides_, for squeezing, and only its start is built until a run needs
    // more (run_guided); keep_family keeps the family when it is the best so far.
    const bool v = p_.stages_per_rank == 2;
    Schedule one_chunk;
    if (v)
      add_guide(family);
    else
      one_chunk = synthesize(name, sp_);
    const std::size_t index = v ? guides_.size() - 1 : 0;  // the guide, for V
    auto schedule = [&]() -> const Schedule& { return v ? guides_[index].schedule : one_chunk; };
    auto keep_family = [&] { v ? keep_guide(index) : keep(std::move(one_chunk)); };
    // A family is replayed through the greedy rather than simulated: a guide with no lookahead
    // runs the pattern as it is (a unit test checks that the two agree), and the replay gives
    // up as soon as the family cannot beat or tie the best so far (a losing V-Half or V-Min
    // within its first actions). The greedy runs F, I and W only, so 1F1B and GPipe (a fused B)
    // are simulated. A replay that runs to the end costs more than a simulation, unless it can
    // copy the pattern's steady state (exact times), so the first family (ZB-H1, or ZBV: usually
    // the best of them, and run with no mark) is replayed only then. The replay runs under the
    // cap: a forward that does not fit stops it, and only then is the peak measured, for the
    // message.
    const bool cheap_replay = mark() != kNever || shape_.exact_times;
    if (positive_costs_ && cheap_replay && only_split_backwards(schedule())) {
      GreedyPolicy replay{.target_cap = p_.memory_cap > 0 ? p_.memory_cap : kNever, .lookahead = 0};
      GreedyRun run;
      if (v) {
        run = run_guided(index, replay, false);
      } else {
        replay.guide = &one_chunk;
        run = greedy_run(shape_, replay, mark(), &buffers_);
      }
      if (!run.finished && !run.gave_up) return over_the_cap(family, v ? whole(index) : one_chunk);
      AutoCandidate c;
      c.origin = family;
      if (record_run(std::move(c), run, "does not finish")) keep_family();
      recycle(run);  // the family is kept as synthesized, not as replayed
      return;
    }
    const Schedule& s = v ? whole(index) : one_chunk;
    // With every cost positive, a rank's memory events happen in program order, so
    // sequential_peak is the simulated peak: a family over the cap is ruled out unsimulated.
    if (positive_costs_ && p_.memory_cap > 0 && !fits_under_cap(sequential_peak(s, p_.memory), p_.memory_cap))
      return over_the_cap(family, s);
    if (consider(simulate_candidate(family, s, p_))) keep_family();
  } catch (const SynthError& e) {
    AutoCandidate c;
    c.origin = std::string(name);
    c.why_not = e.what();
    result_.tried.push_back(std::move(c));
  }
}

// Keeps the best so far as a start for one more local search (improve_start), unless the last one
// kept is as good.
void Search::keep_start() {
  if (!has_best() || !result_.best.fits) return;
  if (starts_.empty() || better(result_.best, starts_.back().best, p_.optimizer))
    starts_.push_back(Start{result_.best, best_schedule()});
}

std::vector<Search::Start*> Search::starts_beaten() {
  std::vector<Start*> beaten;
  for (Start& start : starts_)
    if (better(result_.best, start.best, p_.optimizer)) beaten.push_back(&start);
  return beaten;
}

Schedule& Search::best_schedule() {
  if (!best_guide_) return *best_own_;
  whole(*best_guide_);
  return guides_[*best_guide_].schedule;
}

double Search::improve_best(double most_work) {
  return improve_locally(p_, budget_, best_schedule(), result_, most_work);
}

// The result is the best of the ends, so a round that keeps a start never makes the result
// slower unless the budget runs out.
double Search::improve_start(Start& start, double most_work) {
  AutoResult other;
  other.best = start.best;
  const double work = improve_locally(p_, budget_, start.schedule, other, most_work);
  if (!better(other.best, result_.best, p_.optimizer)) return work;
  result_.best = other.best;
  keep(std::move(start.schedule));
  for (AutoCandidate& c : other.tried) result_.tried.push_back(std::move(c));
  return work;
}

void Search::recycle(GreedyRun& run) {
  if (!run.programs.empty()) buffers_.programs = std::move(run.programs);
}

// A V pattern as a guide: at first its start only (synthesize_prefix), enough for about p + 8
// microbatches, where the replays of a pattern that cannot win usually give up; run_guided
// builds more when a run needs it. Throws SynthError.
void Search::add_guide(const std::string& family) {
  Guide g{family, {}, false, 0};
  build(g, 6 * (std::uint64_t{p_.ranks} + 8));
  guides_.push_back(std::move(g));
}
void Search::build(Guide& g, std::uint64_t slots) {
  g.slots = slots;
  g.schedule = synthesize_prefix(g.family, sp_, slots, g.complete);
}
void Search::extend(Guide& g) { build(g, g.slots > (std::uint64_t{1} << 40) ? UINT64_MAX : 4 * g.slots); }
const Schedule& Search::whole(std::size_t index) {
  Guide& g = guides_[index];
  if (!g.complete) build(g, UINT64_MAX);
  return g.schedule;
}

// A run guided by guides_[index] under the mark. A run that reads past the end of a guide cut
// short is run again with four times the slots (charged to the budget when `charged`): the
// same run as with the whole pattern, which the last attempt has at worst.
GreedyRun Search::run_guided(std::size_t index, GreedyPolicy pol, bool charged) {
  for (;;) {
    Guide& g = guides_[index];
    pol.guide = &g.schedule;
    pol.guide_is_prefix = !g.complete;
    GreedyRun run = greedy_run(shape_, pol, mark(), &buffers_);
    if (!run.guide_exhausted) return run;
    if (charged) budget_.spend(static_cast<double>(run.placed - run.copied));
    extend(g);
  }
}

// A family whose peak is over the cap (or that does not finish), as a candidate that says so.
void Search::over_the_cap(const std::string& family, const Schedule& s) {
  AutoCandidate c;
  c.origin = family;
  c.peak = sequential_peak(s, p_.memory);
  judge_fit(c, p_);
  if (c.fits) {
    c.fits = false;
    c.why_not = "does not finish";
  }
  result_.tried.push_back(std::move(c));
}

}  // namespace ppsched::auto_detail
