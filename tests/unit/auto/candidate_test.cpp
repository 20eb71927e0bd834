// Measuring a candidate (lib/auto/candidate.cpp): the simulator's makespan, peak and longest rank
// span, and whether it fits, with the reason when it does not.
#include "auto/candidate.hpp"
#include "sim/aggregate.hpp"
#include "support/auto_params.hpp"
#include "support/catch.hpp"
#include "synth/synth.hpp"

using namespace ppsched;
using namespace ppsched::test;

TEST_CASE("a candidate is measured as the simulator measures it, and fits only under the cap") {
  SynthParams sp;
  sp.ranks = 4;
  sp.microbatches = 8;
  const Schedule s = synthesize("ZBH1", sp);
  AutoParams a = unit_params(4, 8, 1, 0);
  const Measured want = remeasure(s, a);
  const AutoCandidate c = auto_detail::simulate_candidate("ZBH1", s, a);
  CHECK(c.origin == "ZBH1");
  CHECK(c.makespan == want.makespan);
  CHECK(c.peak == want.peak);
  CHECK(c.span == want.longest_rank_span);
  CHECK(c.fits);  // no cap
  a.memory_cap = want.peak;
  CHECK(auto_detail::simulate_candidate("ZBH1", s, a).fits);
  a.memory_cap = want.peak - 0.5;
  const AutoCandidate over = auto_detail::simulate_candidate("ZBH1", s, a);
  CHECK_FALSE(over.fits);
  CHECK(over.why_not == "peak memory 4 is over the cap 3.5");
}
