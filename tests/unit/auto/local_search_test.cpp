// The local search (lib/auto/local_search.cpp) measures its moves with the incremental
// timeline; where that does not apply it simulates each move whole. Both must take the same
// decisions: the same schedule comes out, and it is never slower than the start.
#include <random>

#include "auto/candidate.hpp"
#include "auto/local_search.hpp"
#include "sim/memory.hpp"
#include "sim/timed.hpp"
#include "support/catch.hpp"
#include "support/random_pipeline.hpp"
#include "synth/synth.hpp"

using namespace ppsched;

TEST_CASE("the local search takes the same moves whether it re-times them incrementally or simulates them") {
  std::mt19937 rng(29);
  int improved = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const std::uint32_t p = 2 + rng() % 5, m = p + rng() % (p + 1), v = 1 + trial % 2;
    const bool span = trial % 3 == 0;
    AutoParams a = test::random_pipeline(rng, p, m, v);
    a.memory_cap = trial % 4 == 0 ? 0.0 : 1.0 * p;
    a.time_budget_s = 100;  // both runs end where no move improves, not where the budget does
    a.optimizer = span ? Optimizer::PostValidated : Optimizer::Sync;
    SynthParams sp;
    sp.ranks = p;
    sp.microbatches = m;
    const Schedule start = synthesize(v == 2 ? "ZBVZeroBubble" : "ZBH1", sp);
    INFO("trial " << trial << " p=" << p << " m=" << m << " v=" << v << (span ? " post-validated" : " sync"));
    const AutoCandidate before = auto_detail::simulate_candidate("start", start, a);
    if (!before.fits) continue;
    Schedule results[2];
    for (int way = 0; way < 2; ++way) {
      results[way] = start;
      AutoResult r;
      r.best = before;
      auto_detail::WorkBudget budget(a.time_budget_s);
      auto_detail::improve_locally(a, budget, results[way], r, auto_detail::kNever, way == 0);
      REQUIRE(iteration_time(r.best, a.optimizer) <= iteration_time(before, a.optimizer) + 1e-9);
      const AutoCandidate after = auto_detail::simulate_candidate("after", results[way], a);
      CHECK(after.fits);
      CHECK(iteration_time(after, a.optimizer) == iteration_time(r.best, a.optimizer));
    }
    CHECK(same_schedule(results[0], results[1]));
    improved += same_schedule(results[0], start) ? 0 : 1;
  }
  CHECK(improved >= 10);  // the trials do move actions
}

TEST_CASE("a local search ends at the share of the budget it is given, no slower than its start") {
  std::mt19937 rng(31);
  int cut = 0;
  for (int trial = 0; trial < 12; ++trial) {
    const std::uint32_t p = 3 + rng() % 4, m = 2 * p, v = 1 + trial % 2;
    AutoParams a = test::random_pipeline(rng, p, m, v);
    a.memory_cap = 1.0 * p;
    SynthParams sp;
    sp.ranks = p;
    sp.microbatches = m;
    const Schedule start = synthesize(v == 2 ? "ZBVZeroBubble" : "ZBH1", sp);
    const AutoCandidate before = auto_detail::simulate_candidate("start", start, a);
    if (!before.fits) continue;
    INFO("trial " << trial << " p=" << p << " v=" << v);
    // Unbounded, then with a fifth of what that used.
    double used_all = 0;
    {
      Schedule s = start;
      AutoResult r;
      r.best = before;
      auto_detail::WorkBudget budget(100);
      used_all = auto_detail::improve_locally(a, budget, s, r);
      CHECK(used_all == Approx(100 * auto_detail::WorkBudget::kActionsPerSecond - budget.left()));
    }
    const double share = used_all / 5;
    Schedule s = start;
    AutoResult r;
    r.best = before;
    auto_detail::WorkBudget budget(100);
    const double used = auto_detail::improve_locally(a, budget, s, r, share);
    // It stops at the first move past the share; one move re-times at most every action, plus a
    // window and a recount of one rank.
    CHECK(used <= share + 3.0 * static_cast<double>(start.action_count()) + p);
    cut += used < used_all ? 1 : 0;
    REQUIRE(iteration_time(r.best, a.optimizer) <= iteration_time(before, a.optimizer) + 1e-9);
    const AutoCandidate after = auto_detail::simulate_candidate("after", s, a);
    CHECK(after.fits);
    CHECK(iteration_time(after, a.optimizer) == iteration_time(r.best, a.optimizer));
    // Nothing to spend: nothing moves.
    Schedule still = start;
    AutoResult none;
    none.best = before;
    CHECK(auto_detail::improve_locally(a, budget, still, none, 0.0) == 0.0);
    CHECK(same_schedule(still, start));
  }
  CHECK(cut >= 6);  // the share does end searches early
}
