// The rounds of the automatic search (rounds.hpp): the table first, read top to bottom, then each
// round's functions in the table's order.
//
// The order is what makes the search fast: every candidate gives up as soon as it can no longer
// beat or tie the best so far (Search's mark), so what is cheap to measure and likely good goes
// first, and the search ends at the first candidate that reaches the lower bound. The figures
// behind these choices are in docs/bench.md ("Figures behind the search's rules").
#include "auto/rounds.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include "auto/one_chunk_rounds.hpp"
#include "auto/search.hpp"
#include "auto/v_blocks.hpp"
#include "auto/v_rounds.hpp"
#include "auto/variants.hpp"
#include "synth/v_slot_reorder.hpp"

namespace ppsched::auto_detail {

namespace {

// When a round applies (Round::applies).
bool one_chunk(const Search& s);
bool two_chunks(const Search& s);
bool v_with_families(const Search& s);
bool first_family_fits(const Search& s);
bool v_up_to_4p(const Search& s);
bool v_below_cap_p(const Search& s);
bool fitting_best(const Search& s);
// What a gated round's candidates cost, all run to the end (Round::work).
double exploration_work(const Search& s);
double unit_time_work(const Search& s);
double block_work(const Search& s);
// The rounds themselves (Round::run).
void first_family(Search& s, const Allowance&);
void first_squeeze(Search& s, const Allowance&);
void first_variant(Search& s, const Allowance&);
void other_families(Search& s, const Allowance&);
void other_variants(Search& s, const Allowance&);
void one_chunk_orders(Search& s, const Allowance&);
void other_squeezes(Search& s, const Allowance&);
void explore(Search& s, const Allowance&);
void rounds_order(Search& s, const Allowance&);
void slot_reorders(Search& s, const Allowance&);
void unit_time_orders(Search& s, const Allowance& a);
void building_blocks(Search& s, const Allowance& a);
void best_cooldown(Search& s, const Allowance&);
void local_search(Search& s, const Allowance& a);

constexpr Round kRounds[] = {
    // V: ZBV, the first family in the registry's order (Family::auto_search_order), before
    // anything else: a few simulations, not charged, and under unit costs at cap p it reaches the
    // bound itself once m >= 2p (3m + (p-1)/2), which ends the search.
    {.name = "first family", .applies = v_with_families, .run = first_family},
    // V, when ZBV fits: ZBV squeezed right away. With uneven costs at cap p it is usually the best
    // candidate, so the ones after it give up much sooner under its mark than under ZBV's own.
    {.name = "first family squeezed", .applies = first_family_fits, .budgeted = true, .run = first_squeeze},
    // The first greedy variant, whatever the budget (the budget bounds those after it). With one
    // chunk it is the first candidate: it reaches the bound under unit costs, where ZB-H1 does not.
    {.name = "first variant", .run = first_variant},
    // The other handcrafted families, whatever the budget (not charged): the result is never
    // slower than a family that fits, and under the mark of the rounds above a losing family
    // gives up within its first actions.
    {.name = "other families", .run = other_families},
    // The other unguided variants, most promising first (greedy_variants), while the budget lasts.
    {.name = "other variants", .budgeted = true, .run = other_variants},
    // One chunk: the order of the Zero Bubble authors' one-chunk search (one_chunk_rounds.hpp) under
    // each of the eight combinations of its rules they try, replayed exactly. The greedy variants
    // above beat it almost everywhere; where the transfer time is a few percent of a forward and
    // the cap is 2p, its W's, placed only in waits they fit, win by hundredths of a percent.
    {.name = "one-chunk rounds", .applies = one_chunk, .budgeted = true, .run = one_chunk_orders},
    // The V patterns not squeezed yet (ZBV too when it did not fit), while the budget lasts.
    {.name = "patterns squeezed", .budgeted = true, .run = other_squeezes},
    // V: the greedy's other switch combinations (exploration_variants) and each pattern squeezed
    // with every other window up to kWidest. At tight caps a greedy's result jumps with such
    // choices, in no order one could rank them by, so only trying them all finds the winner. It is
    // the costliest round, so it runs only where all of it costs at most a thirtieth of the budget
    // left, a third in a large search (kSmallSearch): small V searches stay fast, and a larger
    // --time-budget turns it on for more of them. After the first rounds, whose best sets the mark
    // most of its runs give up under.
    {.name = "exploration",
     .applies = two_chunks,
     .budgeted = true,
     .pays = 30,
     .work = exploration_work,
     .keeps_start = true,
     .run = explore},
    // V up to m = 4p, where the warm-up and the cool-down are much of the run: the order of the
    // Zero Bubble authors' V search (v_rounds.hpp) for each of the four ways of filling waits with
    // W's, replayed exactly and squeezed. Near m = p it keeps the input-gradient chain moving where
    // the greedy lets it lag.
    {.name = "V rounds", .applies = v_up_to_4p, .budgeted = true, .keeps_start = true, .run = rounds_order},
    // V: V-Half and V-Min reordered slot by slot as the Zero Bubble authors' zbv_greedy.py does
    // (synth/v_slot_reorder.hpp), each replayed exactly and squeezed: their order holds its
    // warm-up's second-chunk forwards back longer than a squeeze with the real costs does, which
    // wins where T_F > T_I at their own memory.
    {.name = "slot reorders", .applies = two_chunks, .budgeted = true, .run = slot_reorders},
    // V below cap p, where the greedy and the squeezed patterns lose to the authors' reordered
    // ones: each pattern squeezed in unit time, its order replayed with the real costs. Like the
    // exploration round only where it is cheap (a tenth of the budget left), and the windows that
    // win least only where it is cheaper still (a hundredth).
    {.name = "unit-time orders",
     .applies = v_below_cap_p,
     .budgeted = true,
     .pays = 10,
     .work = unit_time_work,
     .pays_for_all = 100,
     .run = unit_time_orders},
    // V below cap p: the building blocks of the controllable-memory framework (v_blocks.hpp) that
    // fit what the cap holds, each replayed exactly; a tenth of the budget left, as above, and
    // their reordering takes at most a fiftieth of it: the replays and the local search need the
    // rest.
    {.name = "building blocks",
     .applies = v_below_cap_p,
     .budgeted = true,
     .pays = 10,
     .work = block_work,
     .share = 0.02,
     .run = building_blocks},
    // The best so far replayed with the cool-down of the Zero Bubble authors' searches: input
    // gradients first (either chunk's first), a W only in a wait it ends within. Two runs.
    {.name = "best's cool-down", .applies = fitting_best, .budgeted = true, .run = best_cooldown},
    // Last, as it starts from the best: local search on it (local_search.hpp), then from each
    // start kept that a later round improved on. All of them together take at most a twentieth of
    // the whole budget: a local search ends when a pass changes nothing, and from its hill's foot
    // that can take many passes of small gains.
    {.name = "local search", .applies = fitting_best, .share = 0.05, .share_of_whole = true, .run = local_search},
};

// ---- When a round applies ----

bool one_chunk(const Search& s) { return s.params().stages_per_rank == 1; }
bool two_chunks(const Search& s) { return s.params().stages_per_rank == 2; }
bool v_with_families(const Search& s) { return two_chunks(s) && s.families_left() > 0; }
// Right after the first family, for V: it is guides 0, and the last candidate measured.
bool first_family_fits(const Search& s) { return s.guide_count() > 0 && s.last_fits(); }
bool v_up_to_4p(const Search& s) { return two_chunks(s) && s.params().microbatches <= 4 * s.params().ranks; }
bool fitting_best(const Search& s) { return s.has_fitting_best(); }

// How many chunk activations the cap holds on the fullest rank, as the building blocks count
// memory (a forward holds its activation until its W; with M_W < M_B the real peak is lower), at
// most 2p.
std::uint32_t chunks_held(const Search& s) {
  const Shape& sh = s.shape();
  double largest = 0, base = 0;
  for (double a : sh.act) largest = std::max(largest, a);
  for (double b : sh.base) base = std::max(base, b);
  const double cap = s.cap();
  const double held = cap > 0 && largest > 0 ? std::floor((cap - base) / largest + 1e-9) : 2.0 * sh.ranks;
  return static_cast<std::uint32_t>(std::clamp(held, 0.0, 2.0 * sh.ranks));
}
// Below cap p (less than two chunks per rank of every microbatch in flight), where the greedy and
// the squeezed patterns lose to the authors' reordered ones; at cap p and above they do not
// (docs/bench.md, "The review grid").
bool v_below_cap_p(const Search& s) { return two_chunks(s) && chunks_held(s) < 2 * s.shape().ranks; }

// ---- What a gated round costs ----

// Every action of the pipeline, once: what one greedy run or replay places at most.
double actions(const Search& s) { return 3.0 * s.shape().stages * s.shape().microbatches; }

// The windows a V pattern is squeezed with (squeeze_next), and the widest the exploration tries.
constexpr std::uint32_t kNear = 2, kFar = 6, kWidest = 12;
std::vector<std::uint32_t> exploration_windows() {
  std::vector<std::uint32_t> windows;
  for (std::uint32_t w = 0; w <= kWidest; ++w)
    if (w != kNear && w != kFar) windows.push_back(w);
  return windows;
}
double exploration_work(const Search& s) {
  const std::size_t switches = exploration_variants(s.params(), s.shape(), s.variants()).size();
  return static_cast<double>(switches + s.guide_count() * exploration_windows().size()) * actions(s);
}

// The unit-time round's windows, and those that win least (Allowance::every_candidate).
constexpr std::uint32_t kUnitWindows[] = {0, 1, 2, 3, 4, 8, 12};
constexpr std::uint32_t kRareWindows[] = {0, 3, 12};
// A unit run and a replay per pattern and window.
double unit_time_work(const Search& s) {
  return 2.0 * static_cast<double>(s.guide_count() * std::size(kUnitWindows)) * actions(s);
}

// The most building blocks replayed.
constexpr std::size_t kMostBlocks = 64;
double block_work(const Search& s) { return static_cast<double>(kMostBlocks) * actions(s); }

// ---- The rounds ----

// An order built elsewhere (a round's own construction), replayed by the greedy under the real cap:
// exactly (lookahead 0) or squeezed.
void replay(Search& s, std::string origin, const Schedule& order, std::uint32_t lookahead = 0) {
  AutoCandidate c;
  c.origin = std::move(origin);
  // The order rides in the policy: an unguided run of run_greedy follows it all the same.
  s.run_greedy(std::move(c), GreedyPolicy{.target_cap = s.cap(), .guide = &order, .lookahead = lookahead});
}

// The next V pattern squeezed: the greedy, guided by the pattern's order, under the real cap. Each
// rank leaves the pattern once its forwards are done (GreedyPolicy::free_cooldown): better than
// keeping to the pattern far more often than worse, and running both ways found nothing more.
// Looking kNear ahead, the run also checks whether looking kFar ahead would decide the same at
// every step (GreedyPolicy::shadow_lookahead); if so the second run would only repeat the first
// (often so for ZBV: a whole run saved) and is skipped.
void squeeze_next(Search& s) {
  const std::size_t index = s.take_next_squeeze();
  const std::string family = s.guide_family(index);
  bool far_repeats_near = false;
  for (std::uint32_t lookahead : {kNear, kFar}) {
    if (s.stop()) return;
    AutoCandidate c;
    c.origin = fmt::format("{} squeezed (aim {:.4g}, look {} ahead)", family, s.cap(), lookahead);
    if (lookahead == kFar && far_repeats_near) {
      c.why_not = fmt::format("decides as looking {} ahead at every step", kNear);
      s.note(std::move(c));
      return;
    }
    GreedyPolicy pol{.target_cap = s.cap(), .lookahead = lookahead, .free_cooldown = true};
    if (lookahead == kNear) pol.shadow_lookahead = kFar;
    far_repeats_near = s.run_greedy(std::move(c), pol, index);
  }
  // The pattern replayed as it is up to each rank's last forward, then a cool-down in which a W
  // runs only in a wait it ends within (GreedyPolicy::wait_for_input_grad): the input gradients
  // go back to stage 0 unhindered, as in the Zero Bubble authors' V search. With a transfer time
  // between ranks every W the pattern puts between two input gradients delays the chain by that
  // time, and the squeezes above, which take a W whenever no I is ready, lose the same way.
  if (s.stop()) return;
  AutoCandidate c;
  c.origin = fmt::format("{} replayed, W's in the cool-down only where they fit a wait", family);
  s.run_greedy(std::move(c),
               GreedyPolicy{.target_cap = s.cap(), .lookahead = 0, .free_cooldown = true, .wait_for_input_grad = true},
               index);
}

void first_family(Search& s, const Allowance&) { s.measure_next_family(); }
void first_squeeze(Search& s, const Allowance&) { squeeze_next(s); }
void first_variant(Search& s, const Allowance&) { s.run_variant(s.variants()[0]); }
void other_families(Search& s, const Allowance&) {
  while (s.families_left() > 0) s.measure_next_family();
}
void other_variants(Search& s, const Allowance&) {
  for (std::size_t k = 1; k < s.variants().size() && !s.stop(); ++k) s.run_variant(s.variants()[k]);
}
void other_squeezes(Search& s, const Allowance&) {
  while (s.squeezed() < s.guide_count() && !s.stop()) squeeze_next(s);
}

void one_chunk_orders(Search& s, const Allowance&) {
  for (int rule = 0; rule < 8; ++rule) {
    if (s.stop()) return;
    const OneChunkRules rules{.idle_before_first_input_grad = (rule & 1) != 0,
                              .hold_forwards_for_input_grads = (rule & 2) != 0,
                              .fill_short_waits = (rule & 4) != 0};
    auto programs = one_chunk_rounds(s.shape(), s.params().memory_cap, rules);
    s.budget().spend(actions(s));
    if (!programs) continue;
    const Schedule order = schedule_of(s.params(), std::move(*programs));
    replay(s,
           fmt::format("one-chunk rounds ({}{}{})",
                       rules.idle_before_first_input_grad ? "warm-up ends before the first I"
                                                          : "warm-up starts before the first I",
                       rules.hold_forwards_for_input_grads ? ", forwards held for I's" : "",
                       rules.fill_short_waits ? ", W's in short waits" : ""),
           order);
  }
}

void explore(Search& s, const Allowance&) {
  for (const GreedyPolicy& pol : exploration_variants(s.params(), s.shape(), s.variants())) {
    if (s.stop()) return;
    s.run_variant(pol);
  }
  const std::vector<std::uint32_t> windows = exploration_windows();
  for (std::size_t index = 0; index < s.guide_count(); ++index)
    for (std::uint32_t lookahead : windows) {
      if (s.stop()) return;
      AutoCandidate c;
      c.origin = fmt::format("{} squeezed (aim {:.4g}, look {} ahead)", s.guide_family(index), s.cap(), lookahead);
      const GreedyPolicy pol{.target_cap = s.cap(), .lookahead = lookahead, .free_cooldown = true};
      s.run_greedy(std::move(c), pol, index);
    }
}

void rounds_order(Search& s, const Allowance&) {
  const AutoParams& p = s.params();
  for (int fill = 0; fill < 4; ++fill) {
    if (s.stop()) return;
    auto programs = v_rounds(s.shape(), p.memory_cap, (fill & 1) != 0, (fill & 2) != 0);
    if (!programs) continue;
    const Schedule order = schedule_of(p, std::move(*programs));
    for (std::uint32_t lookahead : {0u, kNear}) {
      if (s.stop()) return;
      replay(s,
             fmt::format("rounds (W's filling {}, look {} ahead)",
                         fill == 0   ? "gaps"
                         : fill == 1 ? "gaps and before I"
                         : fill == 2 ? "gaps and before F"
                                     : "gaps, before I and F",
                         lookahead),
             order, lookahead);
    }
  }
}

void slot_reorders(Search& s, const Allowance&) {
  const AutoParams& p = s.params();
  for (bool half : {false, true}) {
    if (s.stop()) return;
    auto programs = vslot::slot_reordered(p.ranks, p.microbatches, half);
    s.budget().spend(2.0 * actions(s));  // two passes over the slots, each about a replay's work
    if (!programs) continue;
    const Schedule order = schedule_of(p, std::move(*programs));
    for (std::uint32_t lookahead : {0u, kNear}) {
      if (s.stop()) return;
      replay(s, fmt::format("{} reordered slot by slot (look {} ahead)", half ? "VHalf" : "VMin", lookahead), order,
             lookahead);
    }
  }
}

// Each pattern squeezed in unit time (every action one unit, transfers free), its order then
// replayed exactly with the real costs. The Zero Bubble authors reorder V-Half and V-Min slot by
// slot so; squeezed with the real costs instead, a rank takes whatever is ready first at times that
// differ by fractions, and the order loses the lockstep that keeps the pipeline full
// (docs/bench.md, "Tight caps: unit-time orders and building blocks"). Memory follows the order, so
// the replay fits as the unit run did.
void unit_time_orders(Search& s, const Allowance& a) {
  const AutoParams& p = s.params();
  AutoParams unit = p;
  unit.sim.costs = CostModel::uniform(s.shape().stages, p.stages_per_rank, unit_costs());
  unit.sim.comm = CommModel{};
  const Shape unit_shape(unit);
  for (std::size_t index = 0; index < s.guide_count(); ++index)
    for (std::uint32_t lookahead : kUnitWindows) {
      if (s.stop()) return;
      if (!a.every_candidate &&
          std::find(std::begin(kRareWindows), std::end(kRareWindows), lookahead) != std::end(kRareWindows))
        continue;
      const GreedyPolicy pol{
          .target_cap = s.cap(), .guide = &s.whole(index), .lookahead = lookahead, .free_cooldown = true};
      GreedyRun unit_run = greedy_run(unit_shape, pol, kNever, &s.buffers());
      s.budget().spend(static_cast<double>(unit_run.placed - unit_run.copied));
      if (!unit_run.finished) {
        s.recycle(unit_run);
        continue;
      }
      const Schedule order = schedule_of(p, std::move(unit_run.programs));
      replay(s, fmt::format("{} squeezed in unit time (look {} ahead)", s.guide_family(index), lookahead), order);
    }
}

// The blocks that fit what the cap holds (chunks_held; the replay checks the real cap), their
// reordering charged to the budget (each slot of a pass as one simulated action).
void building_blocks(Search& s, const Allowance& a) {
  double work = 0;
  auto orders = v_block_orders(s.shape(), chunks_held(s), kMostBlocks, a.most_work, work);
  s.budget().spend(work);
  for (std::size_t k = 0; k < orders.size(); ++k) {
    if (s.stop()) return;
    const Schedule order = schedule_of(s.params(), std::move(orders[k]));
    replay(s, fmt::format("building block {}", k + 1), order);
  }
}

// The best so far as it is up to each rank's last forward, then the cool-down of squeeze_next's
// replay, and again with the first chunk's input gradient first when both are ready (V): wherever
// the best came from, its cool-down may still hold up the input-gradient chain.
void best_cooldown(Search& s, const Allowance&) {
  const Schedule order = s.best_schedule();  // a copy: a better run replaces the best
  const std::string from = s.best_origin();
  for (bool first_chunk : {false, true}) {
    if (s.stop() || (first_chunk && !two_chunks(s))) return;
    AutoCandidate c;
    c.origin = fmt::format("{}, replayed with W's in the cool-down only where they fit a wait{}", from,
                           first_chunk ? ", first chunk's I first" : "");
    s.run_greedy(std::move(c), GreedyPolicy{.target_cap = s.cap(),
                                            .guide = &order,
                                            .lookahead = 0,
                                            .free_cooldown = true,
                                            .wait_for_input_grad = true,
                                            .first_chunk_input_grad_first = first_chunk});
  }
}

// The starts a later round improved on (Round::keeps_start) are searched too, where what is left of
// the budget pays a pass of whole simulations for each search, the best's included (a local
// search's own gate is one pass): where one local search is already most of a search's time, a
// second would double it (docs/bench.md, "Small sizes"). A better start does not always end
// better, so the result is the best of the ends.
void local_search(Search& s, const Allowance& a) {
  double left = a.most_work;
  std::vector<Search::Start*> others = s.starts_beaten();
  const double actions = static_cast<double>(s.best_schedule().action_count());
  const double pass = 2 * 6 * actions * actions;  // local_search.cpp: 2 x kReach moves per action
  if (!s.budget().can_pay(static_cast<double>(1 + others.size()) * pass)) others.clear();
  left -= s.improve_best(left);
  for (Search::Start* start : others)
    if (left > 0) left -= s.improve_start(*start, left);
}

}  // namespace

std::span<const Round> search_rounds() { return kRounds; }

}  // namespace ppsched::auto_detail
