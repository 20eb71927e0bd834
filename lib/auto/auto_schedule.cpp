// The automatic schedule (auto_schedule.hpp): the search that orders its candidates (the greedy
// variants of variants.cpp run by greedy.cpp, the handcrafted families, the V patterns squeezed)
// so that a good one comes early and the others can give up, then local search (local_search.cpp).
#include "auto/auto_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "auto/candidate.hpp"
#include "auto/greedy.hpp"
#include "auto/local_search.hpp"
#include "auto/v_blocks.hpp"
#include "auto/v_rounds.hpp"
#include "auto/variants.hpp"
#include "sim/memory.hpp"
#include "synth/synth.hpp"

namespace ppsched {

namespace {

using auto_detail::check_params;
using auto_detail::greedy_run;
using auto_detail::GreedyPolicy;
using auto_detail::GreedyRun;
using auto_detail::kNever;
using auto_detail::kSameMemory;
using auto_detail::schedule_of;
using auto_detail::Shape;
using auto_detail::WorkBudget;

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

// One search: the best candidate so far, the budget, and the candidates in the order that lets
// the losers give up early (run()).
class Search {
 public:
  explicit Search(const AutoParams& p)
      : p_(p),
        shape_(p),
        budget_(p.time_budget_s),
        local_left_(kLocalShare * p.time_budget_s * WorkBudget::kActionsPerSecond),
        bound_(lower_bound(shape_, p.optimizer)),
        cap_(auto_detail::target_caps(p, shape_).front()),
        policies_(auto_detail::greedy_variants(p, shape_)) {
    sp_.ranks = p.ranks;
    sp_.microbatches = p.microbatches;
    families_ = search_families(p.stages_per_rank);
    // Whether every cost is positive (measure_family says why it matters).
    for (std::uint32_t st = 0; st < shape_.stages; ++st)
      for (ActionKind k : {ActionKind::F, ActionKind::I, ActionKind::W, ActionKind::B})
        positive_costs_ &= p.sim.costs.cost(static_cast<std::uint16_t>(st), k) > 0;
  }

  // Order, for the mark that lets a losing candidate stop early (run_greedy, and the replay in
  // measure_family): what is cheap to measure and likely good goes first. With two chunks: ZBV
  // (under unit costs at cap p it reaches the bound itself, 3m+(p-1)/2 once m >= 2p, which ends
  // the search), and when it fits, ZBV squeezed right away (with uneven costs at cap p usually
  // the best candidate, so the others give up much sooner under its mark than under ZBV's own;
  // the figures behind this file's choices are in docs/bench.md, "Figures behind the search's
  // rules"). Then the first greedy variant (it runs unless something before it reached the
  // bound), the other families, the other variants while the budget lasts, and the other
  // patterns squeezed. With one chunk the first variant goes first: it reaches the bound under
  // unit costs, where ZB-H1 does not.
  AutoResult run() {
    std::size_t next_family = 0;
    if (p_.stages_per_rank == 2 && !families_.empty()) {
      measure_family(families_[next_family++]);  // the first in the registry's order: ZBV
      if (!guides_.empty() && !result_.tried.empty() && result_.tried.back().fits) squeeze_next();
    }
    if (!perfect()) run_variant(policies_[0]);
    while (next_family < families_.size()) measure_family(families_[next_family++]);
    for (std::size_t k = 1; k < policies_.size() && !perfect() && !budget_.spent(); ++k) run_variant(policies_[k]);
    while (squeezed_ < guides_.size() && !perfect() && !budget_.spent()) squeeze_next();
    explore();
    measure_rounds();
    measure_unit_time_orders();
    measure_building_blocks();
    if (!has_best() || !result_.best.fits)
      throw std::invalid_argument(fmt::format("auto: no schedule fits the memory cap {:.4g}", p_.memory_cap));
    result_.schedule = best_guide_ ? std::move(guides_[*best_guide_].schedule) : std::move(*best_own_);
    if (!perfect()) {
      // The earlier starts that a later round improved on (keep_start), asked before the local
      // search changes result_.best (else a start would be searched twice). They are searched
      // only where what is left of the budget would pay for a pass of whole simulations for each
      // search, this one included (the local search's own gate is one pass): where one local
      // search is already most of a search's time (from about 600 actions at the default budget,
      // two searches; docs/bench.md, "Small sizes"), a second would double it.
      std::vector<Start*> others;
      for (Start& start : starts_)
        if (better(result_.best, start.best, p_.optimizer)) others.push_back(&start);
      const double actions = static_cast<double>(result_.schedule.action_count());
      const double pass = 2 * 6 * actions * actions;  // local_search.cpp: 2 x kReach moves per action
      if (!budget_.can_pay(static_cast<double>(1 + others.size()) * pass)) others.clear();
      local_left_ -= auto_detail::improve_locally(p_, budget_, result_.schedule, result_, local_left_);
      for (Start* start : others) improve_runner_up(*start);
    }
    return std::move(result_);
  }

 private:
  // A candidate and its schedule, kept as a start for the local search.
  struct Start {
    AutoCandidate best;
    Schedule schedule;
  };
  // A V pattern, to squeeze (squeeze_next), kept as a guide for the greedy.
  struct Guide {
    std::string family;
    Schedule schedule;    // the pattern, or its start (add_guide)
    bool complete;        // the whole pattern
    std::uint64_t slots;  // how many slots of it were built
  };

  // Records a candidate. True when it is the best so far: the caller then keeps its schedule
  // (keep, or keep_guide for a V pattern, which stays in guides_ for squeezing until the end).
  bool consider(AutoCandidate c) {
    const bool best = !has_best() || better(c, result_.best, p_.optimizer);
    if (best) result_.best = c;
    result_.tried.push_back(std::move(c));
    return best;
  }
  bool has_best() const { return best_own_ || best_guide_; }
  void keep(Schedule s) {
    best_own_ = std::move(s);
    best_guide_.reset();
  }
  void keep_guide(std::size_t index) {
    whole(index);  // a replay that finished has read it all, so this only makes sure
    best_guide_ = index;
    best_own_.reset();
  }

  // A candidate that can no longer beat or tie the best so far stops there (it could not be
  // chosen, so the result is the same as finishing it). The margin covers rounding in the bound;
  // a tie must finish, as the tie-breaks may prefer it.
  double mark() const {
    return has_best() && result_.best.fits ? best_time() + 1e-9 * std::max(1.0, best_time()) : kNever;
  }
  double best_time() const { return iteration_time(result_.best, p_.optimizer); }

  // Nothing can do better than the objective's bound: the search stops at the first candidate
  // that reaches it (later candidates could only tie).
  bool perfect() const {
    const double eps = 1e-9 * std::max(1.0, bound_);
    return has_best() && result_.best.fits && best_time() <= bound_ + eps;
  }

  // Records a run of the greedy as a candidate, or why it did not finish; true when it is the best
  // so far (consider). The greedy's own times are the timed simulator's (compute-only schedule,
  // implicit comms), so a finished run needs no second simulation.
  bool record_run(AutoCandidate c, const GreedyRun& run, std::string_view unfinished) {
    if (!run.finished) {
      c.why_not = run.gave_up
                      ? fmt::format("stopped early: cannot {} {:.6g}, the best so far",
                                    p_.optimizer == Optimizer::Sync ? "finish by" : "keep every rank's span within",
                                    best_time())
                      : std::string(unfinished);
      result_.tried.push_back(std::move(c));
      return false;
    }
    c.makespan = run.makespan;
    c.peak = run.peak;
    c.span = run.span;
    auto_detail::judge_fit(c, p_);
    return consider(std::move(c));
  }

  // One greedy construction, guided by guides_[guide] if given, charged to the budget for the
  // actions it placed (a run that gave up, only those). Returns
  // GreedyRun::same_with_shadow_lookahead.
  bool run_greedy(AutoCandidate c, GreedyPolicy pol, std::optional<std::size_t> guide = std::nullopt) {
    GreedyRun run = guide ? run_guided(*guide, pol, true) : greedy_run(shape_, pol, mark(), &buffers_);
    budget_.spend(static_cast<double>(run.placed - run.copied));
    if (record_run(std::move(c), run, "the greedy got stuck")) {
      keep(schedule_of(p_, std::move(run.programs)));
    } else {
      recycle(run);
    }
    return run.same_with_shadow_lookahead;
  }
  void run_variant(const GreedyPolicy& pol) {
    AutoCandidate c;
    c.origin = auto_detail::describe(pol, p_.stages_per_rank);
    run_greedy(std::move(c), pol);
  }

  // A handcrafted family of this shape: the result is never slower than the best of them that fits
  // (unless a candidate before it is already perfect). Not charged to the budget (a few per search).
  void measure_family(std::string_view name) {
    if (perfect()) return;
    try {
      const std::string family(find_family(name)->name);
      // A V pattern lives in guides_, for squeezing (squeeze_next), and only its start is built
      // until a run needs more (run_guided); keep_family keeps the family when it is the best so
      // far.
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
      // within its first actions). The greedy runs F, I and W
      // only, so 1F1B and GPipe (a fused B) are simulated. A replay that runs to the end costs
      // more than a simulation, unless it can copy the pattern's steady state (exact times), so
      // the first family (ZB-H1, or ZBV: usually the best of them, and run with no mark) is
      // replayed only then. The replay runs under the cap: a forward that does not fit stops it,
      // and only then is the peak measured, for the message.
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
      if (consider(auto_detail::simulate_candidate(family, s, p_))) keep_family();
    } catch (const SynthError& e) {
      AutoCandidate c;
      c.origin = std::string(name);
      c.why_not = e.what();
      result_.tried.push_back(std::move(c));
    }
  }

  // The exploration round, after every other candidate: the combinations of the greedy's switches
  // that the first round leaves out (exploration_variants), and each V pattern squeezed with every
  // window from 0 to kWidest besides kNear and kFar. At tight caps a greedy's result jumps with
  // such choices, in no order one could rank them by (a squeezed pattern's makespan goes down and
  // up again as its window widens: docs/bench.md, "Tight caps"). It runs only when all of it,
  // counted as if no run gave up early, costs at most a thirtieth of the budget left (56 or 57
  // runs of 6pm actions: V up to p x m = 975 at the default budget): small and medium V searches
  // get it, larger ones stay as fast as without it (it is the costliest round, 108M instructions
  // of 275M at p = m = 32: docs/bench.md, "Small sizes below cap p"), and a larger --time-budget
  // turns it on for them too.
  void explore() {
    if (perfect() || budget_.spent()) return;
    const std::vector<GreedyPolicy> switches = auto_detail::exploration_variants(p_, shape_, policies_);
    std::vector<std::uint32_t> windows;
    for (std::uint32_t w = 0; w <= kWidest; ++w)
      if (w != kNear && w != kFar) windows.push_back(w);
    const double runs = static_cast<double>(switches.size() + guides_.size() * windows.size());
    const double actions = 3.0 * shape_.stages * shape_.microbatches;
    if (runs == 0 || !budget_.can_pay(30 * runs * actions)) return;
    keep_start();
    for (const GreedyPolicy& pol : switches) {
      if (perfect() || budget_.spent()) return;
      run_variant(pol);
    }
    for (std::size_t index = 0; index < guides_.size(); ++index)
      for (std::uint32_t lookahead : windows) {
        if (perfect() || budget_.spent()) return;
        AutoCandidate c;
        c.origin = fmt::format("{} squeezed (aim {:.4g}, look {} ahead)", guides_[index].family, cap_, lookahead);
        const GreedyPolicy pol{.target_cap = cap_, .lookahead = lookahead, .free_cooldown = true};
        run_greedy(std::move(c), pol, index);
      }
  }

  // V: the order of rounds (v_rounds), replayed through the greedy (exactly, or squeezed), for each
  // of the four ways of filling waits with W's.
  void measure_rounds() {
    if (p_.stages_per_rank != 2 || p_.microbatches > 4 * p_.ranks || perfect()) return;
    keep_start();  // a better start from here does not always end better (improve_runner_up)
    for (int fill = 0; fill < 4; ++fill) {
      if (perfect() || budget_.spent()) return;
      auto programs = auto_detail::v_rounds(shape_, p_.memory_cap, (fill & 1) != 0, (fill & 2) != 0);
      if (!programs) continue;
      const Schedule order = schedule_of(p_, std::move(*programs));
      for (std::uint32_t lookahead : {0u, kNear}) {
        if (perfect() || budget_.spent()) return;
        AutoCandidate c;
        c.origin = fmt::format("rounds (W's filling {}, look {} ahead)",
                               fill == 0   ? "gaps"
                               : fill == 1 ? "gaps and before I"
                               : fill == 2 ? "gaps and before F"
                                           : "gaps, before I and F",
                               lookahead);
        // The order rides in the policy: an unguided run of run_greedy follows it all the same.
        run_greedy(std::move(c), GreedyPolicy{.target_cap = cap_, .guide = &order, .lookahead = lookahead});
      }
    }
  }

  // How many chunk activations the cap holds on the fullest rank, as the building blocks count
  // memory (a forward holds its activation until its W; with M_W < M_B the real peak is lower),
  // at most 2p.
  std::uint32_t chunks_held() const {
    double largest = 0, base = 0;
    for (double a : shape_.act) largest = std::max(largest, a);
    for (double b : shape_.base) base = std::max(base, b);
    const double held = cap_ > 0 && largest > 0 ? std::floor((cap_ - base) / largest + 1e-9) : 2.0 * p_.ranks;
    return static_cast<std::uint32_t>(std::clamp(held, 0.0, 2.0 * p_.ranks));
  }
  // Below cap p (less than two chunks per rank of every microbatch in flight), where the greedy
  // and the squeezed patterns lose to the authors' reordered ones; at cap p and above they do not
  // (docs/bench.md, "The review grid").
  bool below_cap_p() const { return chunks_held() < 2 * p_.ranks; }

  // V below cap p: each V pattern squeezed in unit time (every action one unit, transfers free),
  // its order then replayed exactly with the real costs. The Zero Bubble authors reorder V-Half
  // and V-Min slot by slot so; squeezed with the real costs instead, a rank takes whatever is ready
  // first at times that differ by fractions, and the order loses the lockstep that keeps the
  // pipeline full (docs/bench.md, "Tight caps: unit-time orders and building blocks"). Memory
  // follows the order, so the replay fits as the unit run did.
  void measure_unit_time_orders() {
    if (p_.stages_per_rank != 2 || perfect() || budget_.spent() || !below_cap_p()) return;
    // Like the exploration round: only when all of it, a unit run and a replay per window, would
    // cost at most a tenth of the budget left.
    const double actions = 3.0 * shape_.stages * shape_.microbatches;
    const double all = 2.0 * static_cast<double>(guides_.size() * std::size(kUnitWindows)) * actions;
    if (!budget_.can_pay(10 * all)) return;
    AutoParams unit = p_;
    unit.sim.costs = CostModel::uniform(shape_.stages, p_.stages_per_rank, unit_costs());
    unit.sim.comm = CommModel{};
    const Shape unit_shape(unit);
    // The windows that won least on the review grid only where they are cheap (a hundredth).
    const bool every_window = budget_.can_pay(100 * all);
    for (std::size_t index = 0; index < guides_.size(); ++index)
      for (std::uint32_t lookahead : kUnitWindows) {
        if (perfect() || budget_.spent()) return;
        if (!every_window &&
            std::find(std::begin(kRareWindows), std::end(kRareWindows), lookahead) != std::end(kRareWindows))
          continue;
        const GreedyPolicy pol{
            .target_cap = cap_, .guide = &whole(index), .lookahead = lookahead, .free_cooldown = true};
        GreedyRun unit_run = greedy_run(unit_shape, pol, kNever, &buffers_);
        budget_.spend(static_cast<double>(unit_run.placed - unit_run.copied));
        if (!unit_run.finished) {
          recycle(unit_run);
          continue;
        }
        const Schedule order = schedule_of(p_, std::move(unit_run.programs));
        AutoCandidate c;
        c.origin = fmt::format("{} squeezed in unit time (look {} ahead)", guides_[index].family, lookahead);
        run_greedy(std::move(c), GreedyPolicy{.target_cap = cap_, .guide = &order, .lookahead = 0});
      }
  }
  static constexpr std::uint32_t kUnitWindows[] = {0, 1, 2, 3, 4, 8, 12};
  static constexpr std::uint32_t kRareWindows[] = {0, 3, 12};

  // V below cap p: the building blocks of the controllable-memory framework (v_blocks.hpp) that
  // fit what the cap holds (chunks_held; the replay checks the real cap), each replayed exactly.
  void measure_building_blocks() {
    if (p_.stages_per_rank != 2 || perfect() || budget_.spent() || !below_cap_p()) return;
    const double actions = 3.0 * shape_.stages * shape_.microbatches;
    if (!budget_.can_pay(10 * static_cast<double>(kMostBlocks) * actions)) return;  // as above
    double work = 0;
    auto orders =
        auto_detail::v_block_orders(shape_, chunks_held(), kMostBlocks, kBlockWorkShare * budget_.left(), work);
    budget_.spend(work);
    for (std::size_t k = 0; k < orders.size(); ++k) {
      if (perfect() || budget_.spent()) return;
      const Schedule order = schedule_of(p_, std::move(orders[k]));
      AutoCandidate c;
      c.origin = fmt::format("building block {}", k + 1);
      run_greedy(std::move(c), GreedyPolicy{.target_cap = cap_, .guide = &order, .lookahead = 0});
    }
  }
  static constexpr std::size_t kMostBlocks = 64;
  // The share of what is left of the budget the blocks' reordering may take (each slot of a pass
  // charged as one simulated action): the replays and the local search need the rest.
  static constexpr double kBlockWorkShare = 0.02;

  // Keeps the best so far as a start for one more local search (improve_runner_up), unless the
  // last one kept is as good.
  void keep_start() {
    if (!has_best() || !result_.best.fits) return;
    if (starts_.empty() || better(result_.best, starts_.back().best, p_.optimizer))
      starts_.push_back(Start{result_.best, best_schedule()});
  }

  // The best schedule so far, wherever it is kept.
  const Schedule& best_schedule() { return best_guide_ ? whole(*best_guide_) : *best_own_; }

  // Local search from an earlier best too (before the exploration round, before the rounds), when
  // what came after found a better one: a better start does not always end better
  // (on random configurations, some results came out slower through the local search). The result
  // is the best of the ends, so exploring never makes it slower unless the budget runs out.
  void improve_runner_up(Start& before) {
    if (local_left_ <= 0) return;
    AutoResult other;
    other.best = before.best;
    local_left_ -= auto_detail::improve_locally(p_, budget_, before.schedule, other, local_left_);
    if (!better(other.best, result_.best, p_.optimizer)) return;
    result_.best = other.best;
    result_.schedule = std::move(before.schedule);
    for (AutoCandidate& c : other.tried) result_.tried.push_back(std::move(c));
  }

  // A finished run's programs that are not kept: storage for the next run (GreedyBuffers).
  void recycle(GreedyRun& run) {
    if (!run.programs.empty()) buffers_.programs = std::move(run.programs);
  }

  // A V pattern as a guide: at first its start only (synthesize_prefix), enough for about p + 8
  // microbatches, where the replays of a pattern that cannot win usually give up; run_guided
  // builds more when a run needs it. Throws SynthError.
  void add_guide(const std::string& family) {
    Guide g{family, {}, false, 0};
    build(g, 6 * (std::uint64_t{p_.ranks} + 8));
    guides_.push_back(std::move(g));
  }
  void build(Guide& g, std::uint64_t slots) {
    g.slots = slots;
    g.schedule = synthesize_prefix(g.family, sp_, slots, g.complete);
  }
  void extend(Guide& g) { build(g, g.slots > (std::uint64_t{1} << 40) ? UINT64_MAX : 4 * g.slots); }
  const Schedule& whole(std::size_t index) {
    Guide& g = guides_[index];
    if (!g.complete) build(g, UINT64_MAX);
    return g.schedule;
  }
  // A run guided by guides_[index] under the mark. A run that reads past the end of a guide cut
  // short is run again with four times the slots (charged to the budget when `charged`): the
  // same run as with the whole pattern, which the last attempt has at worst.
  GreedyRun run_guided(std::size_t index, GreedyPolicy pol, bool charged) {
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
  void over_the_cap(const std::string& family, const Schedule& s) {
    AutoCandidate c;
    c.origin = family;
    c.peak = sequential_peak(s, p_.memory);
    auto_detail::judge_fit(c, p_);
    if (c.fits) {
      c.fits = false;
      c.why_not = "does not finish";
    }
    result_.tried.push_back(std::move(c));
  }

  // The next V pattern squeezed: the greedy, guided by the pattern's order, under the real cap.
  // Each rank leaves the pattern once its forwards are done (GreedyPolicy::free_cooldown): on
  // random configurations that was better than keeping to the pattern far more often than worse,
  // and running both ways found nothing more; with T_F=2 T_I=3 T_W=1 it ends ZBV as soon as the
  // Zero Bubble authors' own V search does. Looking 2 ahead, the run also checks whether looking 6
  // ahead would decide the same at every step (GreedyPolicy::shadow_lookahead); if so the second
  // run would only repeat the first (often so for ZBV: a whole run saved) and is skipped.
  void squeeze_next() {
    const std::size_t index = squeezed_++;
    const std::string family = guides_[index].family;
    bool far_repeats_near = false;
    for (std::uint32_t lookahead : {kNear, kFar}) {
      if (perfect() || budget_.spent()) return;
      AutoCandidate c;
      c.origin = fmt::format("{} squeezed (aim {:.4g}, look {} ahead)", family, cap_, lookahead);
      if (lookahead == kFar && far_repeats_near) {
        c.why_not = fmt::format("decides as looking {} ahead at every step", kNear);
        result_.tried.push_back(std::move(c));
        return;
      }
      GreedyPolicy pol{.target_cap = cap_, .lookahead = lookahead, .free_cooldown = true};
      if (lookahead == kNear) pol.shadow_lookahead = kFar;
      far_repeats_near = run_greedy(std::move(c), pol, index);
    }
  }

  // The windows a V pattern is squeezed with (squeeze_next; explore tries the others up to kWidest).
  static constexpr std::uint32_t kNear = 2, kFar = 6, kWidest = 12;
  // The share of the whole budget the local searches may take together, the search's best first,
  // the runner-ups what it leaves. A local search ends when a pass changes nothing, and from
  // its hill's foot that can take many passes of small gains: 2.5M charged actions at p=12, m=12
  // (V, 864 actions) for no gain in the objective, 1M for each runner-up at p=6, m=12. A
  // twentieth of the default budget is at most about 100M instructions of local search
  // (docs/bench.md, "Small sizes below cap p").
  static constexpr double kLocalShare = 0.05;

  const AutoParams& p_;
  const Shape shape_;
  WorkBudget budget_;
  // What the local searches may still take of the budget, all of them together (kLocalShare).
  double local_left_;
  const double bound_;
  const double cap_;                          // the real cap, as the greedy aims for it
  const std::vector<GreedyPolicy> policies_;  // the unguided variants, in order
  SynthParams sp_;
  std::vector<std::string_view> families_;  // this shape's, the likely best first
  bool positive_costs_ = true;
  std::vector<Guide> guides_;  // the V patterns, to squeeze
  std::size_t squeezed_ = 0;   // guides_[0, squeezed_) are done
  AutoResult result_;
  // The best candidate's schedule: its own, or a V pattern's, left in guides_ until the end.
  std::optional<Schedule> best_own_;
  std::optional<std::size_t> best_guide_;
  auto_detail::GreedyBuffers buffers_;  // shared by every greedy run of the search
  // The best candidates (and their schedules) before the exploration round and before the rounds
  // (keep_start), each a start for one more local search (improve_runner_up).
  std::vector<Start> starts_;
};

}  // namespace

AutoResult auto_schedule(const AutoParams& p) {
  check_params(p);
  const Shape shape(p);
  for (std::uint32_t r = 0; r < p.ranks; ++r) {
    double need = shape.base[r];
    for (std::uint32_t s : shape.own[r]) need += shape.act[s];
    if (!fits_under_cap(need, p.memory_cap))
      throw std::invalid_argument(
          fmt::format("auto: the memory cap {:.4g} is below what rank {} needs for one microbatch ({:.4g})",
                      p.memory_cap, r, need));
  }
  return Search(p).run();
}

}  // namespace ppsched
