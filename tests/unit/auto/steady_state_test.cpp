// The greedy's steady-state copy (greedy.cpp, PeriodWatch): once the decisions repeat, whole
// periods are copied instead of decided. It must build exactly what deciding every step builds.
#include <random>

#include "auto/auto_schedule.hpp"
#include "auto/greedy.hpp"
#include "auto/variants.hpp"
#include "support/catch.hpp"
#include "support/greedy_runs.hpp"
#include "synth/synth.hpp"

using namespace ppsched;
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

}  // namespace

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
