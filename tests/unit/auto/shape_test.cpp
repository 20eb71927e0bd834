// The pipeline as the search sees it (lib/auto/shape.cpp, shape.hpp): the parameters it refuses, a
// schedule of its shape, each rank's stages, and when every time it computes is exact.
#include <stdexcept>

#include "auto/shape.hpp"
#include "support/auto_params.hpp"
#include "support/catch.hpp"

using namespace ppsched;
using namespace ppsched::test;

TEST_CASE("a search refuses no ranks, no microbatches, and stages per rank other than 1 or 2") {
  CHECK_NOTHROW(auto_detail::check_params(unit_params(4, 8, 1, 0)));
  CHECK_NOTHROW(auto_detail::check_params(unit_params(4, 8, 2, 0)));
  CHECK_THROWS_AS(auto_detail::check_params(unit_params(0, 8, 1, 0)), UserError);
  CHECK_THROWS_WITH(auto_detail::check_params(unit_params(4, 0, 1, 0)), Catch::Contains("at least 1"));
  CHECK_THROWS_WITH(auto_detail::check_params(unit_params(4, 8, 3, 0)), Catch::Contains("not 3"));
  CHECK_THROWS_WITH(auto_detail::check_params(unit_params(Action::kMaxStage, 8, 2, 0)),
                    Catch::Contains("too many stages"));
}

TEST_CASE("a schedule of the search's shape: its sizes, V or loop placement, and the programs given") {
  for (std::uint32_t v : {1u, 2u}) {
    const AutoParams a = unit_params(3, 5, v, 0);
    std::vector<std::vector<Action>> programs(3);
    programs[1].push_back(Action::make(ActionKind::F, 1, 0));
    const Schedule s = auto_detail::schedule_of(a, std::move(programs));
    CHECK(s.rank_count() == 3);
    CHECK(s.num_stages == 3 * v);
    CHECK(s.num_microbatches == 5);
    CHECK(s.placement.stage_to_rank == Placement::for_shape(auto_placement(v), 3, v).stage_to_rank);
    CHECK(s.ranks[1].actions == std::vector<Action>{Action::make(ActionKind::F, 1, 0)});
    CHECK(s.ranks[0].actions.empty());
  }
}

TEST_CASE("a V rank holds stages r and 2p-1-r, the higher first, and times are exact only in 1/1024ths") {
  const auto_detail::Shape v(unit_params(3, 4, 2, 0));
  CHECK(v.rank_of == std::vector<std::uint32_t>{0, 1, 2, 2, 1, 0});
  CHECK(v.own[0] == std::vector<std::uint32_t>{5, 0});
  CHECK(v.first_chunk_of_v(2));
  CHECK_FALSE(v.first_chunk_of_v(3));
  CHECK(v.partner(1) == 4);
  CHECK(v.exact_times);
  AutoParams a = unit_params(3, 4, 1, 0);
  a.sim.costs.per_stage[1][static_cast<std::size_t>(ActionKind::W)] = 0.25;
  CHECK(auto_detail::Shape(a).exact_times);
  a.sim.costs.per_stage[1][static_cast<std::size_t>(ActionKind::W)] = 0.1;
  CHECK_FALSE(auto_detail::Shape(a).exact_times);
  a = unit_params(3, 4, 1, 0);
  a.sim.comm.topology = pairs_on_nodes(3, 0.3);  // a transfer time that is not exact
  CHECK_FALSE(auto_detail::Shape(a).exact_times);
}
