// One-chunk rounds (lib/auto/one_chunk_rounds.cpp): the order of the Zero Bubble authors' one-chunk
// search. Replayed by the timed simulator, each of the eight rule combinations ends exactly when
// zb.py's Graph.manual_order says its schedule ends (the makespans below come from their code,
// sail-sg/zero-bubble-pipeline-parallelism, in bench/offline/zb_compare.py's model); and wherever
// the rounds can be built their order is valid, finishes and fits the cap.
#include <random>

#include "auto/one_chunk_rounds.hpp"
#include "auto/shape.hpp"
#include "sim/timed.hpp"
#include "support/auto_params.hpp"
#include "support/catch.hpp"

using namespace ppsched;
using namespace ppsched::test;

namespace {

// zb_compare.py's one-chunk model: per-rank costs, a latency `comm` on every transfer, M_W = m_w
// M_B, a cap of `cap` microbatches.
AutoParams one_chunk_params(std::uint32_t p, std::uint32_t m, double cap, double t_f, double t_i, double t_w,
                            double comm, double m_w) {
  AutoParams a = costed_params(p, m, 1, cap, t_f, t_i, t_w);
  if (comm > 0) {
    a.sim.comm.topology = pairs_on_nodes(p, comm);
    a.sim.comm.topology->intra_node.latency_us = comm;
  }
  for (double& w : a.memory.weight_grad) w = m_w;
  return a;
}

Schedule one_chunk_schedule(std::vector<std::vector<Action>>&& programs, const AutoParams& a) {
  Schedule s;
  s.num_stages = a.ranks;
  s.num_microbatches = a.microbatches;
  s.placement = Placement::for_shape(PlacementStyle::Loop, a.ranks, 1);
  s.ranks.resize(a.ranks);
  for (std::uint32_t r = 0; r < a.ranks; ++r) s.ranks[r].actions = std::move(programs[r]);
  return s;
}

// Rule combination k as zb.py's initial_solution loops over them: allow_bubble_before_first_b,
// prioritize_b and no_bubble_greedy, True before False, the first outermost.
auto_detail::OneChunkRules rules_of(int k) {
  return {.idle_before_first_input_grad = (k & 4) == 0,
          .hold_forwards_for_input_grads = (k & 2) == 0,
          .fill_short_waits = (k & 1) == 0};
}

}  // namespace

TEST_CASE("one-chunk rounds end when zb.py's manual_order says, under every rule") {
  struct Case {
    std::uint32_t p, m;
    double t_f, t_i, t_w, comm, m_w, cap;
    double theirs[8];
  };
  const Case cases[] = {
      {7,
       35,
       18.522,
       18.086,
       9.337,
       0.601,
       1.0,
       14,
       {1722.813, 1722.826, 1722.813, 1722.865, 1797.739, 1724.054, 1731.304, 1722.813}},
      {8, 20, 4, 2, 1, 0.25, 1.0, 16, {175.5, 174.0, 175.5, 173.5, 175.0, 172.0, 171.5, 170.5}},
      {8, 20, 4, 2, 1, 0.25, 1.0, 8, {185.5, 182.0, 185.5, 182.0, 185.5, 182.0, 185.5, 182.0}},
      {10, 40, 2, 1, 1, 0.125, 1.0, 20, {179.125, 179.875, 179.125, 179.875, 179.125, 179.125, 179.125, 179.125}},
      {6, 14, 2, 3, 1, 0.5, 0.5, 6, {114, 114, 114, 114, 114, 114, 114, 114}},
      {4, 10, 2, 1, 1, 0, 0.5, 4, {46, 46, 46, 46, 46, 46, 46, 46}},
  };
  for (const Case& c : cases) {
    const AutoParams a = one_chunk_params(c.p, c.m, c.cap, c.t_f, c.t_i, c.t_w, c.comm, c.m_w);
    const auto_detail::Shape shape(a);
    for (int k = 0; k < 8; ++k) {
      INFO("p=" << c.p << " m=" << c.m << " cap=" << c.cap << " rules " << k);
      auto programs = auto_detail::one_chunk_rounds(shape, a.memory_cap, rules_of(k));
      REQUIRE(programs.has_value());
      const Schedule s = one_chunk_schedule(std::move(*programs), a);
      CHECK(validation_errors(s) == 0);
      const Measured got = remeasure(s, a);
      CHECK(got.makespan == Approx(c.theirs[k]).epsilon(1e-9));
      CHECK(fits_under_cap(got.peak, c.cap));
    }
  }
}

TEST_CASE("one-chunk rounds are valid, finish and fit wherever they can be built") {
  std::mt19937 rng(43);
  int built = 0;
  for (int trial = 0; trial < 80; ++trial) {
    AutoParams a = random_small_pipeline(rng);
    if (a.stages_per_rank != 1) continue;
    a.memory_cap = rng() % 2 == 0 ? double(a.ranks) : 2.0 * a.ranks;
    const auto_detail::Shape shape(a);
    for (int k = 0; k < 8; ++k) {
      auto programs = auto_detail::one_chunk_rounds(shape, a.memory_cap, rules_of(k));
      if (!programs) continue;
      ++built;
      INFO("trial " << trial << " p=" << a.ranks << " m=" << a.microbatches << " rules " << k);
      const Schedule s = one_chunk_schedule(std::move(*programs), a);
      CHECK(validation_errors(s) == 0);
      CHECK(find_stuck(s, s.placement.stage_to_rank, a.sim).empty());
      CHECK(fits_under_cap(remeasure(s, a).peak, a.memory_cap));
    }
  }
  CHECK(built > 100);
}

TEST_CASE("one-chunk rounds refuse two chunks and a cap below a microbatch") {
  const AutoParams v = v_params(4, 8, 4, 1, 1, 1);
  CHECK_FALSE(auto_detail::one_chunk_rounds(auto_detail::Shape(v), 4, {}).has_value());
  const AutoParams tight = one_chunk_params(4, 8, 0.5, 1, 1, 1, 0, 0.5);
  CHECK_FALSE(auto_detail::one_chunk_rounds(auto_detail::Shape(tight), 0.5, {}).has_value());
}
