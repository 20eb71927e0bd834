// The greedy variants (lib/auto/variants.cpp): the caps they aim for, the exploration round's
// combinations, and their names.
#include <algorithm>

#include "auto/shape.hpp"
#include "auto/variants.hpp"
#include "support/auto_params.hpp"
#include "support/catch.hpp"

using namespace ppsched;
using namespace ppsched::test;
using auto_detail::GreedyPolicy;

TEST_CASE("the greedy aims for the real cap first, then the lower caps of the handcrafted shapes, each once") {
  // One chunk, no cap: the "real" cap is 2p microbatches, then ZB-H2's 2p-1 and ZB-H1's p.
  const AutoParams loop = unit_params(4, 8, 1, 0);
  CHECK(auto_detail::target_caps(loop, auto_detail::Shape(loop)) == std::vector<double>{8, 7, 4});
  // V at p = 2, cap 4: 3, then ZB-H1's p = 2, which is also V-Half's (p+2)/2: once.
  const AutoParams v = unit_params(2, 4, 2, 4);
  CHECK(auto_detail::target_caps(v, auto_detail::Shape(v)) == std::vector<double>{4, 3, 2});
  // Only caps below the real one: at cap p, only V-Half's (p+2)/2 is lower.
  const AutoParams tight = unit_params(6, 12, 2, 6);
  CHECK(auto_detail::target_caps(tight, auto_detail::Shape(tight)) == std::vector<double>{6, 4});
}

TEST_CASE("the exploration round repeats none of the first round's variants, and is for V only") {
  for (std::uint32_t v : {1u, 2u})
    for (Optimizer o : {Optimizer::Sync, Optimizer::PostValidated}) {
      AutoParams a = unit_params(5, 10, v, 5);
      a.optimizer = o;
      const auto_detail::Shape shape(a);
      const std::vector<GreedyPolicy> first = auto_detail::greedy_variants(a, shape);
      const std::vector<GreedyPolicy> more = auto_detail::exploration_variants(a, shape, first);
      CHECK_FALSE(first.empty());
      CHECK(first.front().target_cap == 5);
      if (v == 1) {
        CHECK(more.empty());
        continue;
      }
      CHECK_FALSE(more.empty());
      for (const GreedyPolicy& pol : more) {
        CHECK(std::find(first.begin(), first.end(), pol) == first.end());
        CHECK(pol.target_cap == 5);
      }
    }
}

TEST_CASE("a variant's name says each switch that is on") {
  CHECK(auto_detail::describe(GreedyPolicy{.target_cap = 4}, 1) == "greedy (aim 4, F before W)");
  CHECK(auto_detail::describe(GreedyPolicy{.target_cap = 4, .weight_first = true, .late_chunk_first = false}, 2) ==
        "greedy (aim 4, W before F, early chunk first)");
  const GreedyPolicy paper{.target_cap = 2.5,
                           .wait_for_input_grad = true,
                           .only_forwards_wait = true,
                           .balance_idle = true,
                           .forward_after_input_grad = true};
  CHECK(auto_detail::describe(paper, 1) ==
        "greedy (aim 2.5, F before W, forwards wait for a due I, W's wait while the rank can afford it, F after "
        "each I)");
}
