// The greedy list scheduler (lib/auto/greedy.cpp): its times are the timed simulator's for every
// policy, a pattern replayed through it runs as the pattern does, it gives up exactly at its mark,
// a squeezed run that says a wider window decides the same builds the same; the steady-state copy
// (PeriodWatch) builds exactly what deciding every step builds; and a run guided by a V pattern cut
// short (GreedyPolicy::guide_is_prefix, as the search builds V-Half and V-Min at first) either
// stops, saying it needs more of the guide, or builds exactly what the run on the whole pattern
// builds.
#include <algorithm>
#include <random>

#include "auto/auto_schedule.hpp"
#include "auto/greedy.hpp"
#include "auto/variants.hpp"
#include "sim/timed.hpp"
#include "support/auto_params.hpp"
#include "support/catch.hpp"
#include "support/greedy_runs.hpp"
#include "synth/synth.hpp"

using namespace ppsched;
using namespace ppsched::test;
using auto_detail::greedy_schedule;
using auto_detail::GreedyPolicy;

namespace {

// A pipeline whose costs are multiples of 1/4 (exact times: the copy is on), long enough in
// microbatches for a steady state, with M_W = M_B/2 or M_W = M_B.
AutoParams exact_pipeline(std::mt19937& rng) {
  const std::uint32_t p = 2 + rng() % 7, v = 1 + rng() % 2, m = p + rng() % (12 * p);
  AutoParams a;
  a.ranks = p;
  a.microbatches = m;
  a.stages_per_rank = v;
  a.sim.costs = CostModel::uniform(p * v, v, unit_costs());
  auto quarter = [&rng] { return (1 + rng() % 12) / 4.0; };
  const bool uniform = rng() % 2 == 0;  // the same costs on every stage, or each its own
  const double f = quarter(), i = quarter(), w = quarter();
  const double held = rng() % 2 == 0 ? 0.5 : 1.0;
  for (std::uint32_t s = 0; s < p * v; ++s) {
    auto& c = a.sim.costs.per_stage[s];
    c[static_cast<std::size_t>(ActionKind::F)] = uniform ? f : quarter();
    c[static_cast<std::size_t>(ActionKind::I)] = uniform ? i : quarter();
    c[static_cast<std::size_t>(ActionKind::W)] = uniform ? w : quarter();
    a.memory.activation.push_back(1.0 / v);
    a.memory.weight_grad.push_back(held / v);
  }
  return a;
}

void check_same(const auto_detail::GreedyRun& copied, const auto_detail::GreedyRun& decided) {
  test::check_same_run(copied, decided);
  CHECK(decided.copied == 0);
}

// The greedy under `pol`, given as its mark the value `objective` reads off its own unmarked run:
// on the mark it finishes with the same programs and makespan (it could win the tie-breaks; the
// bound is a sum of products, rounded otherwise than the run's sums), just below it it gives up.
template <class Objective>
void check_gives_up_exactly(const AutoParams& a, const GreedyPolicy& pol, Objective objective) {
  Schedule full, marked, late;
  double makespan = 0, again = 0, unused = 0;
  if (!greedy_schedule(a, pol, full, makespan)) return;
  const double value = objective(full, makespan);
  REQUIRE(greedy_schedule(a, pol, marked, again, value * (1 + 1e-12)));
  CHECK(again == makespan);
  for (std::uint32_t r = 0; r < a.ranks; ++r) CHECK(marked.ranks[r].actions == full.ranks[r].actions);
  CHECK_FALSE(greedy_schedule(a, pol, late, unused, value * (1 - 1e-9)));
}

}  // namespace

TEST_CASE("a pattern-guided greedy with no lookahead and no cap runs the pattern as it is") {
  for (const char* family : {"VMin", "VHalf", "ZBVZeroBubble"})
    for (std::uint32_t p : {4u, 6u}) {
      SynthParams sp;
      sp.ranks = p;
      sp.microbatches = 2 * p;
      const Schedule pattern = synthesize(family, sp);
      AutoParams a = unit_params(p, 2 * p, 2, 0);
      const GreedyPolicy pol{.target_cap = 1e9, .guide = &pattern, .lookahead = 0};
      Schedule s;
      double makespan = 0;
      INFO(family << " p=" << p);
      REQUIRE(greedy_schedule(a, pol, s, makespan));
      for (std::uint32_t r = 0; r < p; ++r) {  // the pattern's compute, without its idle steps
        std::vector<Action> compute;
        for (const Action& x : pattern.ranks[r].actions)
          if (!x.is_idle()) compute.push_back(x);
        CHECK(s.ranks[r].actions == compute);
      }
      CHECK(makespan == remeasure(pattern, a).makespan);
    }
}

// The search measures families after the first by replaying them through the greedy (so that
// they can give up early): the replay must give the simulator's makespan, peak and span.
TEST_CASE("a family replayed through the greedy has the simulator's makespan, peak and span") {
  std::mt19937 rng(31);
  std::uniform_real_distribution<double> cost(0.25, 4.0);
  for (int trial = 0; trial < 30; ++trial) {
    AutoParams a = test::random_small_pipeline(rng);
    const std::uint32_t p = a.ranks;
    a.sim.comm.topology = pairs_on_nodes(p, cost(rng));
    const auto_detail::Shape shape(a);
    SynthParams sp;
    sp.ranks = p;
    sp.microbatches = a.microbatches;
    for (const char* family : {"ZBH1", "ZBH2", "ZBVZeroBubble", "VHalf", "VMin"}) {
      Schedule h;
      try {
        h = synthesize(family, sp);
      } catch (const SynthError&) {
        continue;
      }
      if (h.num_stages != shape.stages) continue;
      INFO("trial " << trial << " " << family << " p=" << p << " m=" << a.microbatches);
      const GreedyPolicy replay{.target_cap = 1e300, .guide = &h, .lookahead = 0};
      const auto_detail::GreedyRun run = auto_detail::greedy_run(shape, replay);
      REQUIRE(run.finished);
      const Measured want = remeasure(h, a);
      CHECK(run.makespan == want.makespan);
      CHECK(run.peak == Approx(want.peak).epsilon(1e-12));
      CHECK(run.span == Approx(want.longest_rank_span).epsilon(1e-12));
    }
  }
}

TEST_CASE("the greedy's own makespan is the timed simulator's, for every policy, cost and topology") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> cost(0.25, 4.0);
  for (int trial = 0; trial < 40; ++trial) {
    AutoParams a = test::random_small_pipeline(rng);
    const std::uint32_t p = a.ranks, m = a.microbatches, v = a.stages_per_rank;
    a.sim.comm.topology = pairs_on_nodes(p, cost(rng));
    for (double cap : {double(p) * 2, double(p), 1.0 + p / 2})
      for (bool weight_first : {false, true}) {
        INFO("trial " << trial << " p=" << p << " m=" << m << " v=" << v << " cap=" << cap << " W first "
                      << weight_first);
        Schedule s;
        double makespan = 0;
        a.memory_cap = cap;
        if (!greedy_schedule(a, {cap, weight_first, true}, s, makespan)) continue;
        CHECK(makespan == simulate_timed(s, s.placement.stage_to_rank, a.sim).makespan);
      }
  }
}

TEST_CASE("a greedy given a mark gives up exactly when it cannot finish by it") {
  // The search passes the best makespan so far as the mark. Giving up must never lose a candidate
  // that would finish by the mark (it could win the tie-breaks), and a run that ends later must
  // give up, at the latest on its last action.
  std::mt19937 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    AutoParams a = test::random_small_pipeline(rng);
    const std::uint32_t p = a.ranks, m = a.microbatches, v = a.stages_per_rank;
    for (double cap : {double(p) * 2, 1.0 + p / 2})
      for (bool weight_first : {false, true}) {
        INFO("trial " << trial << " p=" << p << " m=" << m << " v=" << v << " cap=" << cap << " W first "
                      << weight_first);
        a.memory_cap = cap;
        const GreedyPolicy pol{.target_cap = cap, .weight_first = weight_first, .late_chunk_first = true};
        check_gives_up_exactly(a, pol, [](const Schedule&, double makespan) { return makespan; });
      }
  }
}

TEST_CASE("under post-validated a greedy given a mark gives up exactly when a rank's span cannot stay within it") {
  // The span objective's mark: a run whose longest rank span is within it must finish as it
  // would unmarked (it could win the tie-breaks), and a run whose span is over it must give up.
  std::mt19937 rng(17);
  for (int trial = 0; trial < 40; ++trial) {
    AutoParams a = test::random_small_pipeline(rng);
    a.optimizer = Optimizer::PostValidated;
    const std::uint32_t p = a.ranks, m = a.microbatches, v = a.stages_per_rank;
    for (double cap : {double(p) * 2, 1.0 + p / 2})
      for (bool wait : {false, true}) {
        INFO("trial " << trial << " p=" << p << " m=" << m << " v=" << v << " cap=" << cap << " waits " << wait);
        a.memory_cap = cap;
        const GreedyPolicy pol{.target_cap = cap, .late_chunk_first = true, .wait_for_input_grad = wait};
        check_gives_up_exactly(a, pol,
                               [&](const Schedule& full, double) { return remeasure(full, a).longest_rank_span; });
      }
  }
}

TEST_CASE("a squeezed run that says a wider window decides the same builds what the wider run builds") {
  // The search skips the run that looks 6 ahead when the run that looks 2 ahead says the wider
  // window would have made every one of its decisions: that run must then be an exact repeat.
  std::mt19937 rng(23);
  int same = 0, parted = 0;
  for (int trial = 0; trial < 60; ++trial) {
    AutoParams a = test::random_small_pipeline(rng);
    if (a.stages_per_rank != 2) continue;
    const std::uint32_t p = a.ranks;
    a.memory_cap = std::max(1.0, (p + 4) / 3.0 + (rng() % (2 * p)) / 2.0);
    const auto_detail::Shape shape(a);
    SynthParams sp;
    sp.ranks = p;
    sp.microbatches = a.microbatches;
    for (const char* family : {"ZBVZeroBubble", "VHalf", "VMin"}) {
      Schedule guide;
      try {
        guide = synthesize(family, sp);
      } catch (const SynthError&) {
        continue;
      }
      INFO("trial " << trial << " " << family << " p=" << p << " m=" << a.microbatches << " cap=" << a.memory_cap);
      const GreedyPolicy near{
          .target_cap = a.memory_cap, .guide = &guide, .lookahead = 2, .free_cooldown = true, .shadow_lookahead = 6};
      const GreedyPolicy far{.target_cap = a.memory_cap, .guide = &guide, .lookahead = 6, .free_cooldown = true};
      const auto_detail::GreedyRun n = auto_detail::greedy_run(shape, near);
      const auto_detail::GreedyRun f = auto_detail::greedy_run(shape, far);
      if (!n.same_with_shadow_lookahead) {
        ++parted;
        continue;
      }
      ++same;
      CHECK(n.finished == f.finished);
      CHECK(n.placed == f.placed);
      CHECK(n.makespan == f.makespan);
      CHECK(n.programs == f.programs);
    }
  }
  // Both answers occur, so both sides are exercised.
  CHECK(same > 0);
  CHECK(parted > 0);
}

TEST_CASE("copying the steady state builds what deciding every step builds, for every variant and guide") {
  std::mt19937 rng(2026);
  std::size_t runs = 0, runs_copying = 0, copied = 0, placed = 0, gave_up = 0;
  for (int trial = 0; trial < 120; ++trial) {
    AutoParams a = exact_pipeline(rng);
    const std::uint32_t p = a.ranks, m = a.microbatches, v = a.stages_per_rank;
    a.memory_cap = v == 2 ? (p + 4) / 3.0 + (rng() % (2 * p)) / 2.0 : 1.0 + rng() % (2 * p);
    const auto_detail::Shape shape(a);
    REQUIRE(shape.exact_times);
    std::vector<GreedyPolicy> policies = auto_detail::greedy_variants(a, shape);
    // Two of the exploration round's switch combinations (all of them would make the test slow).
    const std::vector<GreedyPolicy> more = auto_detail::exploration_variants(a, shape, policies);
    for (int k = 0; k < 2 && !more.empty(); ++k) policies.push_back(more[rng() % more.size()]);
    SynthParams sp;
    sp.ranks = p;
    sp.microbatches = m;
    std::vector<Schedule> guides;
    if (v == 2)
      for (const char* family : {"ZBVZeroBubble", "VHalf", "VMin"}) guides.push_back(synthesize(family, sp));
    for (const Schedule& g : guides) {
      policies.push_back({.target_cap = 1e300, .guide = &g, .lookahead = 0});  // a replay of the pattern
      policies.push_back(
          {.target_cap = a.memory_cap, .guide = &g, .lookahead = 2, .free_cooldown = true, .shadow_lookahead = 6});
      // and with another window, as the exploration round squeezes (0 to 12 ahead)
      policies.push_back({.target_cap = a.memory_cap,
                          .guide = &g,
                          .lookahead = static_cast<std::uint32_t>(rng() % 13),
                          .free_cooldown = true});
    }
    for (std::size_t k = 0; k < policies.size(); ++k) {
      GreedyPolicy on = policies[k], off = policies[k];
      off.copy_steady_state = false;
      const auto_detail::GreedyRun free_run = auto_detail::greedy_run(shape, off);
      // Without a mark, and with marks that end the run part-way, on it, and past it.
      std::vector<double> marks{auto_detail::kNever};
      if (free_run.finished)
        for (double f : {0.95, 0.999, 1.0, 1.02}) marks.push_back(free_run.makespan * f);
      for (double mark : marks) {
        INFO("trial " << trial << " p=" << p << " m=" << m << " v=" << v << " cap=" << a.memory_cap << " policy " << k
                      << " mark " << mark);
        const auto_detail::GreedyRun decided = auto_detail::greedy_run(shape, off, mark);
        const auto_detail::GreedyRun fast = auto_detail::greedy_run(shape, on, mark);
        check_same(fast, decided);
        ++runs;
        runs_copying += fast.copied > 0;
        copied += fast.copied;
        placed += fast.placed;
        gave_up += fast.gave_up;
      }
    }
  }
  // The copy happened often and for a good share of the actions, and marks ended runs, so both
  // the copy and giving up around it were exercised (when written: 1,704 of 7,077 runs copied,
  // 20% of the actions, and 2,822 runs gave up).
  INFO(runs << " runs, " << runs_copying << " copied, " << copied << " of " << placed << " actions; " << gave_up
            << " gave up");
  CHECK(runs_copying * 5 > runs);
  CHECK(copied * 10 > placed);
  CHECK(gave_up * 5 > runs);
}

TEST_CASE("the steady-state copy is off unless every time the greedy computes is exact") {
  AutoParams a;
  a.ranks = 4;
  a.microbatches = 64;
  a.stages_per_rank = 1;
  a.sim.costs = CostModel::uniform(4, 1, unit_costs());
  a.memory_cap = 4;
  {
    const auto_detail::Shape shape(a);
    CHECK(shape.exact_times);
    CHECK(auto_detail::greedy_run(shape, {4, false, true}).copied > 0);
  }
  a.sim.costs.per_stage[2][static_cast<std::size_t>(ActionKind::I)] = 0.1;  // not a multiple of 1/1024
  {
    const auto_detail::Shape shape(a);
    CHECK_FALSE(shape.exact_times);
    const auto_detail::GreedyRun run = auto_detail::greedy_run(shape, {4, false, true});
    CHECK(run.finished);
    CHECK(run.copied == 0);
  }
}

TEST_CASE("a run on a cut guide stops or builds what the run on the whole guide builds") {
  std::mt19937 rng(524);
  std::size_t runs = 0, exhausted = 0, same_and_cut = 0, gave_up_cut = 0;
  for (int trial = 0; trial < 150; ++trial) {
    const std::uint32_t p = 2 + rng() % 9, m = 1 + rng() % (6 * p);
    AutoParams a;
    a.ranks = p;
    a.microbatches = m;
    a.stages_per_rank = 2;
    a.sim.costs = CostModel::uniform(2 * p, 2, unit_costs());
    std::uniform_real_distribution<double> any(0.25, 3.0);
    const bool exact = trial % 2 == 0;  // the steady-state copy on or off
    auto cost = [&] { return exact ? (1 + rng() % 12) / 4.0 : any(rng); };
    const double f = cost(), i = cost(), w = cost();
    for (std::uint32_t s = 0; s < 2 * p; ++s) {
      auto& c = a.sim.costs.per_stage[s];
      c[static_cast<std::size_t>(ActionKind::F)] = f;
      c[static_cast<std::size_t>(ActionKind::I)] = i;
      c[static_cast<std::size_t>(ActionKind::W)] = w;
      a.memory.activation.push_back(0.5);
      a.memory.weight_grad.push_back(0.25);
    }
    a.memory_cap = (p + 4) / 3.0 + (rng() % (2 * p)) / 2.0;
    const auto_detail::Shape shape(a);
    SynthParams sp;
    sp.ranks = p;
    sp.microbatches = m;
    for (const char* family : {"VHalf", "VMin"}) {
      const Schedule whole = synthesize(family, sp);
      const GreedyPolicy replay{.target_cap = auto_detail::kNever, .guide = &whole, .lookahead = 0};
      const GreedyPolicy replay_capped{.target_cap = a.memory_cap, .guide = &whole, .lookahead = 0};
      const GreedyPolicy near{
          .target_cap = a.memory_cap, .guide = &whole, .lookahead = 2, .free_cooldown = true, .shadow_lookahead = 6};
      const GreedyPolicy far{.target_cap = a.memory_cap, .guide = &whole, .lookahead = 6, .free_cooldown = true};
      for (const GreedyPolicy& pol : {replay, replay_capped, near, far}) {
        const auto_detail::GreedyRun free_run = auto_detail::greedy_run(shape, pol);
        std::vector<double> marks{auto_detail::kNever};
        if (free_run.finished)
          for (double k : {0.9, 0.99, 1.0}) marks.push_back(free_run.makespan * k);
        for (double mark : marks) {
          const auto_detail::GreedyRun full = auto_detail::greedy_run(shape, pol, mark);
          CHECK_FALSE(full.guide_exhausted);
          // Cuts in the warm-up, where the search cuts, anywhere, and around the last forwards
          // (after which a squeeze leaves the guide, but may still have looked past the cut).
          for (std::uint64_t slots :
               {std::uint64_t{1} + rng() % (6 * p), std::uint64_t{6} * (p + 8),
                std::uint64_t{6} * (rng() % (m + 2 * p + 2)), std::uint64_t{6} * (m - 1) + rng() % (4 * p)}) {
            INFO("trial " << trial << " p=" << p << " m=" << m << " " << family << " lookahead " << pol.lookahead
                          << " mark " << mark << " slots " << slots);
            bool complete = false;
            const Schedule cut = synthesize_prefix(family, sp, slots, complete);
            GreedyPolicy on_cut = pol;
            on_cut.guide = &cut;
            on_cut.guide_is_prefix = !complete;
            const auto_detail::GreedyRun run = auto_detail::greedy_run(shape, on_cut, mark);
            ++runs;
            if (run.guide_exhausted) {
              CHECK_FALSE(complete);
              CHECK_FALSE(run.finished);
              ++exhausted;
              continue;
            }
            test::check_same_run(run, full);
            same_and_cut += !complete;
            gave_up_cut += !complete && run.gave_up;
          }
        }
      }
    }
  }
  // Both outcomes happen, and cut guides were enough for runs that gave up under a mark (what
  // the search relies on) and for runs that finished (a squeeze leaves the guide in its cool-down).
  INFO(runs << " runs, " << exhausted << " stopped for more guide, " << same_and_cut << " the same on a cut guide, "
            << gave_up_cut << " of which gave up");
  CHECK(exhausted * 5 > runs);
  CHECK(same_and_cut * 10 > runs);
  CHECK(gave_up_cut * 20 > runs);
}
