// V orders from building blocks (lib/auto/v_blocks.cpp): each is a valid order that holds what it was
// allowed; and the framework's reordered V-Half and V-Min (lib/synth/v_block.cpp), which the
// search's rounds compare with.
#include <random>

#include "auto/shape.hpp"
#include "auto/v_blocks.hpp"
#include "sim/memory.hpp"
#include "sim/timed.hpp"
#include "support/auto_params.hpp"
#include "support/catch.hpp"
#include "synth/synth.hpp"

using namespace ppsched;
using namespace ppsched::test;

TEST_CASE("every building block's order is each action once, finishes, and holds what it was allowed") {
  std::mt19937 rng(43);
  int built = 0;
  for (int trial = 0; trial < 40; ++trial) {
    AutoParams a = test::random_small_pipeline(rng);
    if (a.stages_per_rank != 2) continue;
    const std::uint32_t p = a.ranks;
    // Memory as the blocks count it: a chunk's activation is 1 until its W (M_W = M_B).
    for (std::uint32_t s = 0; s < 2 * p; ++s) {
      a.memory.activation[s] = 1;
      a.memory.weight_grad[s] = 1;
    }
    const auto chunks = static_cast<std::uint32_t>(2 + rng() % (2 * p - 1));
    const auto_detail::Shape shape(a);
    double work = 0;
    const auto orders = auto_detail::v_block_orders(shape, chunks, 8, 1e12, work);
    for (const auto& programs : orders) {
      ++built;
      const Schedule s = v_schedule(programs, a.microbatches);
      INFO("trial " << trial << " p=" << p << " m=" << a.microbatches << " chunks " << chunks);
      CHECK(validation_errors(s) == 0);
      CHECK(find_stuck(s, s.placement.stage_to_rank, a.sim).empty());
      CHECK(sequential_peak(s, a.memory) <= chunks);
    }
  }
  CHECK(built > 20);
}

TEST_CASE("V-Half and V-Min reordered are valid, hold no more than the patterns, and are no slower") {
  // Unit costs, M_W = M_B (memory as the framework counts it). At p=8, m=16: V-Half 61 -> 56.5;
  // V-Min 61.5 either way (its pattern leaves no hole the framework can fill there).
  for (std::uint32_t p : {2u, 3u, 4u, 5u, 6u, 8u, 12u, 16u})
    for (std::uint32_t m : {p, p + 1, 2 * p, 4 * p})
      for (const auto& [plain, reordered] :
           {std::pair{"VHalf", "VHalfReordered"}, std::pair{"VMin", "VMinReordered"}}) {
        INFO(reordered << " p=" << p << " m=" << m);
        SynthParams sp;
        sp.ranks = p;
        sp.microbatches = m;
        const Schedule a = synthesize(plain, sp), b = synthesize(reordered, sp);
        AutoParams params = unit_params(p, m, 2, 0);
        params.memory.weight_grad = params.memory.activation;
        CHECK(validation_errors(b) == 0);
        const Measured x = remeasure(a, params), y = remeasure(b, params);
        CHECK(y.peak <= x.peak + 1e-9);
        CHECK(y.makespan <= x.makespan + 1e-9);
      }
  SynthParams sp;
  sp.ranks = 8;
  sp.microbatches = 16;
  AutoParams params = unit_params(8, 16, 2, 0);
  CHECK(remeasure(synthesize("VHalfReordered", sp), params).makespan == 56.5);
  CHECK(remeasure(synthesize("VHalf", sp), params).makespan == 61);
}
