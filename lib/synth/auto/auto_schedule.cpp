// The automatic schedule (auto_schedule.hpp): the search around the greedy list scheduler
// (greedy.cpp) and the handcrafted families.
#include "synth/auto/auto_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "sim/aggregate.hpp"
#include "sim/memory.hpp"
#include "synth/auto/greedy.hpp"
#include "synth/synth.hpp"

namespace ppsched {

namespace {

using auto_detail::greedy_run;
using auto_detail::GreedyRun;
using auto_detail::kNever;
using auto_detail::kSlack;
using auto_detail::Shape;

Schedule empty_schedule(const AutoParams& p) {
  Schedule s;
  s.ranks.resize(p.ranks);
  s.num_stages = p.ranks * p.stages_per_rank;
  s.num_microbatches = p.microbatches;
  s.placement = p.stages_per_rank == 2 ? *Placement::v(p.ranks, s.num_stages) : Placement::loop(p.ranks, s.num_stages);
  return s;
}

void check_params(const AutoParams& p) {
  if (p.ranks == 0 || p.microbatches == 0) throw std::invalid_argument("auto: ranks and microbatches must be at least 1");
  if (p.stages_per_rank != 1 && p.stages_per_rank != 2)
    throw std::invalid_argument(fmt::format(
        "auto: --stages-per-rank must be 1 (loop placement) or 2 (V placement), not {}", p.stages_per_rank));
  if (p.ranks * p.stages_per_rank > Action::kMaxStage)
    throw std::invalid_argument("auto: too many stages");
}

// Simulated makespan and peak of a schedule; fits when it finishes under the cap.
AutoCandidate measure(std::string origin, const Schedule& s, const AutoParams& p) {
  AutoCandidate c;
  c.origin = std::move(origin);
  std::optional<SimAnalysis> a = try_simulate_aggregates(s, s.placement.stage_to_rank, p.sim, p.memory);
  if (!a) {
    c.why_not = "does not finish";
    return c;
  }
  c.makespan = a->makespan;
  c.peak = a->memory.max_peak();
  for (const RankUsage& u : a->ranks) c.span = std::max(c.span, u.last_action_end - u.first_action_start);
  c.fits = p.memory_cap <= 0 || c.peak <= p.memory_cap + kSlack;
  if (!c.fits) c.why_not = fmt::format("peak memory {:.4g} is over the cap {:.4g}", c.peak, p.memory_cap);
  return c;
}

// No schedule of this shape can finish sooner: a rank cannot start before the first microbatch's
// forwards reach it, and then has all its own work to do.
double makespan_lower_bound(const Shape& sh) {
  double bound = 0;
  for (std::uint32_t r = 0; r < sh.ranks; ++r) {
    double work = 0;
    for (std::uint32_t s : sh.own[r]) work += sh.microbatches * (sh.f[s] + sh.backward[s]);
    const std::uint32_t first = sh.own[r].back();  // its lowest stage
    double reach = 0;
    for (std::uint32_t s = 0; s < first; ++s) reach += sh.f[s] + sh.fwd_xfer[s + 1];
    bound = std::max(bound, reach + work);
  }
  return bound;
}

// Whether every action is F, I, W or an idle step: what the greedy can replay.
bool only_split_backwards(const Schedule& s) {
  for (const RankProgram& rank : s.ranks)
    for (const Action& a : rank.actions)
      if (!a.is_idle() && a.kind != ActionKind::F && a.kind != ActionKind::I && a.kind != ActionKind::W) return false;
  return true;
}

bool better(const AutoCandidate& a, const AutoCandidate& b) {
  if (!a.fits) return false;
  if (!b.fits) return true;
  const double eps = 1e-12 * std::max(1.0, b.makespan);
  if (std::abs(a.makespan - b.makespan) > eps) return a.makespan < b.makespan;
  if (std::abs(a.span - b.span) > eps) return a.span < b.span;  // less bubble inside the ranks
  return a.peak < b.peak - kSlack;
}

// The caps the greedy aims for: the real one first, then the memory of the handcrafted shapes
// (2p-1 and p microbatches of activation: ZB-H2, ZB-H1; and for two chunks (p+2)/2: V-Half), each
// only when lower. V-Half's memory is a V shape's: with one chunk, aiming that low only starves
// the pipeline (at p=64, m=512, T_F=2, T_I=3, T_W=1: 5697 against 3359 at the cap p).
std::vector<double> target_caps(const AutoParams& p, const Shape& sh) {
  double unit = 0;  // one microbatch's activation on the busiest rank
  for (std::uint32_t r = 0; r < sh.ranks; ++r) {
    double sum = sh.base[r];
    for (std::uint32_t s : sh.own[r]) sum += sh.act[s];
    unit = std::max(unit, sum);
  }
  double cap = p.memory_cap > 0 ? p.memory_cap : unit * 2 * p.ranks;
  std::vector<double> caps{cap};
  std::vector<double> shapes{2.0 * p.ranks - 1, 1.0 * p.ranks};
  if (p.stages_per_rank == 2) shapes.push_back((p.ranks + 2) / 2.0);
  for (double k : shapes)
    if (k * unit < cap - kSlack && k * unit >= unit) caps.push_back(k * unit);
  return caps;
}

// The search's budget, counted in work rather than read from a clock, so that the same input gives
// the same schedule on any machine: --time-budget seconds at a nominal 10M simulated actions per
// second (about what one core here does, memory accounting included). Each greedy run is charged
// the actions it placed (one that gave up part-way, only those) and each local-search simulation
// its action count; the handcrafted families, a few simulations per search, are not charged.
class WorkBudget {
 public:
  explicit WorkBudget(double seconds) : left_(seconds * 1e7) {}
  /// Charges `actions`; false once the budget is spent.
  bool spend(double actions) {
    left_ -= actions;
    return left_ >= 0;
  }
  bool spent() const { return left_ < 0; }
  bool can_pay(double actions) const { return left_ >= actions; }

 private:
  double left_;
};

// Local search on the best schedule found. A move takes one action of a rank and puts it up to
// kReach places earlier or later in that rank's program: a W earlier fills a bubble and frees
// memory sooner, a W later lets a forward or an input gradient on the critical path go first, and
// forwards or input gradients of different chunks trade places. Each move is re-simulated and kept
// when the schedule still finishes under the cap and is better in (makespan, then the sum of the
// ranks' finish times): the second key lets the search cross the plateaus where one move cannot
// shorten the makespan alone but frees a rank for the next. A move that breaks a dependency does not
// finish and is dropped. First improvement, pass after pass, until a pass changes nothing or the
// budget is spent; the result is never worse than what it started from.
struct Score {
  double makespan, finish_sum;
};
Score score_of(const Schedule& s, const AutoParams& p, bool& fits) {
  fits = false;
  std::optional<SimAnalysis> a = try_simulate_aggregates(s, s.placement.stage_to_rank, p.sim, p.memory);
  if (!a) return {kNever, kNever};
  double sum = 0;
  for (const RankUsage& u : a->ranks) sum += u.last_action_end;
  fits = p.memory_cap <= 0 || a->memory.max_peak() <= p.memory_cap + kSlack;
  return {a->makespan, sum};
}

bool improves(const Score& a, const Score& b) {
  const double eps = 1e-12 * std::max(1.0, b.makespan);
  if (a.makespan < b.makespan - eps) return true;
  return a.makespan <= b.makespan + eps && a.finish_sum < b.finish_sum - eps * 8;
}

void improve_locally(const AutoParams& p, WorkBudget& budget, Schedule& best, AutoResult& result) {
  constexpr std::ptrdiff_t kReach = 6;
  const double actions = static_cast<double>(best.action_count());
  // A pass tries up to 2 * kReach moves per action, each a whole simulation. When the budget
  // cannot pay for one pass, first improvement would only ever look at the first actions of the
  // first ranks, a corner of the schedule chosen by its numbering, not by where the bubbles are;
  // then the search is skipped, and the budget is not burnt on it (a larger --time-budget turns
  // it on).
  if (!budget.can_pay(actions * 2 * kReach * actions)) return;
  bool fits = false;
  Score current = score_of(best, p, fits);
  std::size_t moves = 0;
  for (bool changed = true; changed && !budget.spent();) {
    changed = false;
    for (std::size_t r = 0; r < best.ranks.size() && !budget.spent(); ++r) {
      auto& ops = best.ranks[r].actions;
      const auto n = static_cast<std::ptrdiff_t>(ops.size());
      for (std::ptrdiff_t k = 0; k < n && !budget.spent(); ++k) {
        for (std::ptrdiff_t d = -kReach; d <= kReach && !budget.spent(); ++d) {
          const std::ptrdiff_t to = k + d;
          if (d == 0 || to < 0 || to >= n) continue;
          // Never past the F or I of its own (stage, microbatch): that can only deadlock.
          const Action moved = ops[k];
          bool blocked = false;
          for (std::ptrdiff_t j = std::min(k, to); j <= std::max(k, to) && !blocked; ++j)
            blocked = j != k && ops[j].stage == moved.stage && ops[j].microbatch() == moved.microbatch();
          if (blocked) continue;
          auto rotate = [&](std::ptrdiff_t from, std::ptrdiff_t into) {
            if (from < into)
              std::rotate(ops.begin() + from, ops.begin() + from + 1, ops.begin() + into + 1);
            else
              std::rotate(ops.begin() + into, ops.begin() + from, ops.begin() + from + 1);
          };
          rotate(k, to);
          budget.spend(actions);
          bool ok = false;
          Score c = score_of(best, p, ok);
          if (ok && improves(c, current)) {
            current = c;
            changed = true;
            ++moves;
            break;  // position k now holds another action: look at it afresh
          }
          rotate(to, k);  // undo
        }
      }
    }
  }
  if (moves == 0) return;
  // Every kept move finished under the cap and was no slower, so the result is at least as good.
  AutoCandidate c = measure(fmt::format("{} + {} local move{}", result.best.origin, moves, moves == 1 ? "" : "s"), best, p);
  if (!c.fits || !(c.makespan <= result.best.makespan + 1e-12 * std::max(1.0, result.best.makespan))) return;
  result.best = c;
  result.tried.push_back(c);
}

}  // namespace

bool greedy_schedule(const AutoParams& p, const GreedyPolicy& policy, Schedule& out, double& makespan,
                     double give_up_above) {
  check_params(p);
  const Shape shape(p);
  GreedyRun run = greedy_run(shape, policy, give_up_above);
  makespan = run.makespan;
  if (!run.finished) return false;
  out = empty_schedule(p);
  for (std::uint32_t r = 0; r < p.ranks; ++r) out.ranks[r].actions = std::move(run.programs[r]);
  return true;
}

AutoResult auto_schedule(const AutoParams& p) {
  check_params(p);
  const Shape shape(p);
  for (std::uint32_t r = 0; r < p.ranks; ++r) {
    double need = shape.base[r];
    for (std::uint32_t s : shape.own[r]) need += shape.act[s];
    if (p.memory_cap > 0 && need > p.memory_cap + kSlack)
      throw std::invalid_argument(fmt::format(
          "auto: the memory cap {:.4g} is below what rank {} needs for one microbatch ({:.4g})", p.memory_cap, r, need));
  }
  WorkBudget budget(p.time_budget_s);
  AutoResult result;
  std::optional<Schedule> best_schedule;
  auto consider = [&](AutoCandidate c, Schedule s) {
    if (!best_schedule || better(c, result.best)) {
      result.best = c;
      best_schedule = std::move(s);
    }
    result.tried.push_back(std::move(c));
  };

  // A candidate that can no longer beat or tie the best so far stops there (it could not be
  // chosen, so the result is the same as finishing it). The margin covers rounding in the bound;
  // a tie must finish, as the tie-breaks may prefer it.
  auto mark = [&] {
    return best_schedule && result.best.fits ? result.best.makespan + 1e-9 * std::max(1.0, result.best.makespan)
                                             : kNever;
  };
  // One greedy construction, kept as a candidate (or recorded as stuck). The greedy's own times are
  // the timed simulator's (compute-only schedule, implicit comms), so it needs no second simulation.
  // Records a finished run as a candidate, with `s` its schedule, or why it did not finish.
  auto record_run = [&](AutoCandidate c, const GreedyRun& run, Schedule s, std::string_view unfinished) {
    if (!run.finished) {
      c.why_not = run.gave_up ? fmt::format("stopped early: cannot finish by {:.6g}, the best so far", result.best.makespan)
                              : std::string(unfinished);
      result.tried.push_back(std::move(c));
      return;
    }
    c.makespan = run.makespan;
    c.peak = run.peak;
    c.span = run.span;
    c.fits = p.memory_cap <= 0 || c.peak <= p.memory_cap + kSlack;
    if (!c.fits) c.why_not = fmt::format("peak memory {:.4g} is over the cap {:.4g}", c.peak, p.memory_cap);
    consider(std::move(c), std::move(s));
  };
  // Returns GreedyRun::same_with_shadow_lookahead.
  auto run_greedy = [&](AutoCandidate c, const GreedyPolicy& pol) {
    GreedyRun run = greedy_run(shape, pol, mark());
    budget.spend(static_cast<double>(run.placed));  // a variant that gave up costs what it did
    Schedule s = empty_schedule(p);
    if (run.finished)
      for (std::uint32_t r = 0; r < p.ranks; ++r) s.ranks[r].actions = std::move(run.programs[r]);
    record_run(std::move(c), run, std::move(s), "the greedy got stuck");
    return run.same_with_shadow_lookahead;
  };

  // Nothing can finish sooner than the makespan bound: the search stops at the first candidate
  // that reaches it (later candidates could only tie).
  const double bound = makespan_lower_bound(shape);
  auto perfect = [&] {
    const double eps = 1e-9 * std::max(1.0, bound);
    return best_schedule && result.best.fits && result.best.makespan <= bound + eps;
  };

  // Greedy variants, most promising first, until the budget is spent (the first runs unless ZBV,
  // measured before it, already reaches the bound).
  // The greedy's own times are the timed simulator's (compute-only schedule, implicit comms), so
  // its candidates need no second simulation.
  // W before F only for two chunks: with one, a W taken before a forward that fits only delays
  // the pipeline, which ZB-H1 (a candidate below) already covers. On 300 random configurations
  // (p 2..16, m p..4p, T_F, T_I, T_W in [0.5, 3], cap p..2p) no one-chunk W-first variant was
  // the winner, while for two chunks 6 were.
  const std::vector<bool> weight_orders = p.stages_per_rank == 2 ? std::vector<bool>{false, true} : std::vector<bool>{false};
  std::vector<GreedyPolicy> policies;
  for (double cap : target_caps(p, shape))
    for (bool late_first : p.stages_per_rank == 2 ? std::vector<bool>{true, false} : std::vector<bool>{true})
      for (bool weight_first : weight_orders) {
        policies.push_back({cap, weight_first, late_first});
        // Room for one second chunk only with the late chunk first and F before W: on 300 random
        // V configurations it won 95 times there, and 7 times in the three other combinations.
        if (p.stages_per_rank == 2 && late_first && !weight_first) policies.push_back({cap, false, true, false});
      }
  // The variants that aim at the real cap (the first one, or for V the first three) again, each
  // waiting for a due I (GreedyPolicy::wait_for_input_grad). On 300 random configurations that
  // gave a faster schedule 10 times and a slower one once (through the local search that
  // followed), and every winner among them aimed at the real cap; waiting in every variant instead
  // was slower 37 times. At m = p with T_F=2 T_I=3 T_W=1 or T_F=3 T_I=4 T_W=2, where the warm-up
  // and cool-down are most of the run, it is what matches the Zero Bubble authors' V search
  // (p = 5 to 8; docs/bench.md).
  for (std::size_t k = 0, n = std::min<std::size_t>(3, policies.size()); k < n && policies[k].target_cap == policies[0].target_cap; ++k) {
    GreedyPolicy waiting = policies[k];
    waiting.wait_for_input_grad = true;
    policies.push_back(waiting);
  }
  auto run_policy = [&](std::size_t k) {
    const GreedyPolicy& pol = policies[k];
    AutoCandidate c;
    c.origin = fmt::format("greedy (aim {:.4g}, {}{}{}{})", pol.target_cap, pol.weight_first ? "W before F" : "F before W",
                           p.stages_per_rank == 2 ? (pol.late_chunk_first ? ", late chunk first" : ", early chunk first")
                                                  : "",
                           pol.reserve_each ? "" : ", second-chunk room as V-Min's",
                           pol.wait_for_input_grad ? ", waits for a due I" : "");
    run_greedy(std::move(c), pol);
  };
  // The handcrafted families of this shape, simulated: the result is never slower than the best
  // of them that fits (unless a candidate before them is already perfect).
  SynthParams sp;
  sp.ranks = p.ranks;
  sp.microbatches = p.microbatches;
  // With every cost positive, a rank's memory events happen in program order, so sequential_peak
  // is the simulated peak: a family over the cap is ruled out without simulating it.
  bool positive_costs = true;
  for (std::uint32_t st = 0; st < shape.stages; ++st)
    for (ActionKind k : {ActionKind::F, ActionKind::I, ActionKind::W, ActionKind::B})
      positive_costs &= p.sim.costs.cost(static_cast<std::uint16_t>(st), k) > 0;
  const std::vector<std::string_view> families_in_order =
      p.stages_per_rank == 1 ? std::vector<std::string_view>{"ZBH1", "ZBH2", "1F1B", "GPipe"}
                             : std::vector<std::string_view>{"ZBVZeroBubble", "VHalf", "VMin"};
  std::vector<std::pair<std::string, Schedule>> guides;  // the V patterns (ZBV, V-Half, V-Min), to squeeze below
  auto measure_family = [&](std::string_view name) {
    if (perfect()) return;
    try {
      Schedule s = synthesize(name, sp);
      const std::string family(find_family(name)->name);
      if (p.stages_per_rank == 2) guides.emplace_back(family, s);
      if (const double peak = sequential_peak(s, p.memory);
          positive_costs && p.memory_cap > 0 && peak > p.memory_cap + kSlack) {
        AutoCandidate c;
        c.origin = family;
        c.peak = peak;
        c.why_not = fmt::format("peak memory {:.4g} is over the cap {:.4g}", peak, p.memory_cap);
        result.tried.push_back(std::move(c));
        return;
      }
      // The first family of a shape (ZB-H1, or ZBV), usually the best of them, is simulated. The
      // others, once there is a mark, are replayed through the greedy instead: a guide with no
      // lookahead runs the pattern as it is (a unit test checks that the two agree), and the
      // replay gives up as soon as the family cannot beat or tie the best so far (at p=32,
      // m=512 with T_F=2 T_I=3 T_W=1, V-Half and V-Min after 1% of their actions). The greedy
      // runs F, I and W only, so 1F1B and GPipe (a fused B) are simulated. A replay that runs
      // to the end costs more than a simulation, which is why the likely winner is not
      // replayed. Under the cap already (sequential_peak above), so no cap of its own.
      if (positive_costs && mark() != kNever && name != families_in_order.front() && only_split_backwards(s)) {
        GreedyPolicy replay;
        replay.target_cap = kNever;
        replay.guide = &s;
        replay.lookahead = 0;
        const GreedyRun run = greedy_run(shape, replay, mark());  // before `s` moves into the candidate
        AutoCandidate c;
        c.origin = family;
        record_run(std::move(c), run, std::move(s), "does not finish");
        return;
      }
      AutoCandidate c = measure(family, s, p);
      consider(std::move(c), std::move(s));
    } catch (const SynthError& e) {
      AutoCandidate c;
      c.origin = std::string(name);
      c.why_not = e.what();
      result.tried.push_back(std::move(c));
    }
  };
  // The V patterns squeezed: the greedy, guided by a pattern's order, under the real cap. Each
  // rank leaves the pattern once its forwards are done (GreedyPolicy::free_cooldown): on 300
  // random configurations that was better than keeping to the pattern 39 times and worse 4 times
  // (through the local search that followed), and running both ways found nothing more. With
  // T_F=2 T_I=3 T_W=1 it ends ZBV half a unit sooner at every size tried (p=3 to 64), which is
  // what the Zero Bubble authors' own V search finds there.
  const double cap = target_caps(p, shape).front();
  std::size_t squeezed = 0;  // guides[0, squeezed) are done
  // Looking 2 ahead, the run also checks whether looking 6 ahead would decide the same at every
  // step (GreedyPolicy::shadow_lookahead); if so the second run would only repeat the first (at
  // p=64, m=512 with T_F=2 T_I=3 T_W=1, ZBV's: a whole run saved) and is skipped.
  auto squeeze_next = [&] {
    const auto& [family, guide] = guides[squeezed++];
    constexpr std::uint32_t kNear = 2, kFar = 6;
    bool far_repeats_near = false;
    for (std::uint32_t lookahead : {kNear, kFar}) {
      if (perfect() || budget.spent()) return;
      AutoCandidate c;
      c.origin = fmt::format("{} squeezed (aim {:.4g}, look {} ahead)", family, cap, lookahead);
      if (lookahead == kFar && far_repeats_near) {
        c.why_not = fmt::format("decides as looking {} ahead at every step", kNear);
        result.tried.push_back(std::move(c));
        return;
      }
      GreedyPolicy pol{cap, false, true, true, &guide, lookahead, true};
      if (lookahead == kNear) pol.shadow_lookahead = kFar;
      far_repeats_near = run_greedy(std::move(c), pol);
    }
  };

  // Order, for the mark that lets a losing candidate stop early (run_greedy, and the replay in
  // measure_family): what is cheap to measure and likely good goes first. With two chunks: ZBV
  // (under unit costs at cap p it reaches the bound itself, 3m+(p-1)/2 once m >= 2p, which ends
  // the search), and when it fits, ZBV squeezed right away (with uneven costs at cap p usually
  // the best candidate: at p=32, m=512, T_F=2 T_I=3 T_W=1 the others then give up after 1-8% of
  // their actions, against 8-47% under ZBV's own mark). Then the first greedy variant, the other
  // families, the other variants, and the other patterns squeezed. With one chunk the first
  // variant goes first: it reaches the bound under unit costs, where ZB-H1 does not.
  std::size_t next_family = 0;
  if (p.stages_per_rank == 2) {
    measure_family(families_in_order[next_family++]);  // ZBV
    if (!guides.empty() && !result.tried.empty() && result.tried.back().fits) squeeze_next();
  }
  if (!perfect()) run_policy(0);
  while (next_family < families_in_order.size()) measure_family(families_in_order[next_family++]);
  for (std::size_t k = 1; k < policies.size() && !perfect() && !budget.spent(); ++k) run_policy(k);
  while (squeezed < guides.size() && !perfect() && !budget.spent()) squeeze_next();
  if (!best_schedule || !result.best.fits)
    throw std::invalid_argument(fmt::format("auto: no schedule fits the memory cap {:.4g}", p.memory_cap));
  if (!perfect()) improve_locally(p, budget, *best_schedule, result);
  result.schedule = std::move(*best_schedule);
  return result;
}

}  // namespace ppsched
