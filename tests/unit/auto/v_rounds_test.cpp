// A V schedule built in rounds (lib/auto/v_rounds.cpp): wherever the rounds can be built, their order
// is a valid schedule that finishes.
#include <random>

#include "auto/shape.hpp"
#include "auto/v_rounds.hpp"
#include "sim/timed.hpp"
#include "support/auto_params.hpp"
#include "support/catch.hpp"

using namespace ppsched;
using namespace ppsched::test;

TEST_CASE("the rounds' order is every action once, and finishes, wherever it can be built") {
  std::mt19937 rng(41);
  int built = 0;
  for (int trial = 0; trial < 60; ++trial) {
    AutoParams a = test::random_small_pipeline(rng);
    if (a.stages_per_rank != 2) continue;
    a.memory_cap = rng() % 2 == 0 ? double(a.ranks) : 1.0 + a.ranks / 2;
    const auto_detail::Shape shape(a);
    for (int fill = 0; fill < 4; ++fill) {
      const auto programs = auto_detail::v_rounds(shape, a.memory_cap, (fill & 1) != 0, (fill & 2) != 0);
      if (!programs) continue;
      ++built;
      const Schedule s = v_schedule(*programs, a.microbatches);
      INFO("trial " << trial << " p=" << a.ranks << " m=" << a.microbatches << " fill " << fill);
      CHECK(validation_errors(s) == 0);
      CHECK(find_stuck(s, s.placement.stage_to_rank, a.sim).empty());
    }
  }
  CHECK(built > 20);
}
