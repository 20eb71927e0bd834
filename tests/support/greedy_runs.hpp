// Checks that two runs of the automatic search's greedy (lib/auto/greedy.hpp) built the same
// thing, for tests that build one schedule two ways (the steady-state copy, a guide cut short).
#pragma once

#include "auto/greedy.hpp"
#include "support/catch.hpp"

namespace ppsched::test {

/// The same outcome, schedule and measures: finished or gave up at the same point, with the same
/// programs, makespan, peak, span and shadow verdict.
inline void check_same_run(const auto_detail::GreedyRun& a, const auto_detail::GreedyRun& b) {
  CHECK(a.finished == b.finished);
  CHECK(a.gave_up == b.gave_up);
  CHECK(a.placed == b.placed);
  CHECK(a.makespan == b.makespan);
  CHECK(a.peak == b.peak);
  CHECK(a.span == b.span);
  CHECK(a.same_with_shadow_lookahead == b.same_with_shadow_lookahead);
  CHECK(a.programs == b.programs);
}

}  // namespace ppsched::test
