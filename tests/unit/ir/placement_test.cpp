#include "ir/placement.hpp"

#include "support/catch.hpp"

using namespace ppsched;

TEST_CASE("loop placement puts stage s on rank s mod R") {
  Placement p = Placement::loop(4, 8);
  CHECK(p.stage_to_rank == std::vector<std::uint32_t>{0, 1, 2, 3, 0, 1, 2, 3});
  CHECK(p.rank_to_stages(4)[1] == std::vector<std::uint32_t>{1, 5});
}

TEST_CASE("v placement zig-zags and co-locates the middle stages") {
  auto p = Placement::v(4, 8);
  REQUIRE(p);
  CHECK(p->stage_to_rank == std::vector<std::uint32_t>{0, 1, 2, 3, 3, 2, 1, 0});
  CHECK(p->rank_to_stages(4)[0] == std::vector<std::uint32_t>{0, 7});
  auto three_laps = Placement::v(2, 6);
  REQUIRE(three_laps);
  CHECK(three_laps->stage_to_rank == std::vector<std::uint32_t>{0, 1, 1, 0, 0, 1});
  CHECK_FALSE(Placement::v(4, 6));
  CHECK_FALSE(Placement::v(0, 4));
}

TEST_CASE("placement style names round-trip") {
  for (auto s : {PlacementStyle::Unspecified, PlacementStyle::Loop, PlacementStyle::V, PlacementStyle::Explicit})
    CHECK(placement_style_from_name(placement_style_name(s)) == s);
  CHECK_FALSE(placement_style_from_name("zigzag"));
}
