// A greedy run guided by a V pattern cut short (GreedyPolicy::guide_is_prefix, as the search
// builds V-Half and V-Min at first) either stops, saying it needs more of the guide, or builds
// exactly what the run on the whole pattern builds.
#include <random>

#include "auto/auto_schedule.hpp"
#include "auto/greedy.hpp"
#include "support/catch.hpp"
#include "support/greedy_runs.hpp"
#include "synth/synth.hpp"

using namespace ppsched;
using auto_detail::GreedyPolicy;

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
