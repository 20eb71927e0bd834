// The ping-pong's figure: half the median round trip, whatever the order and outliers.
#include <stdexcept>
#include <vector>

#include "run/ping_pong.hpp"
#include "support/catch.hpp"

using namespace ppsched::run;

TEST_CASE("one way is half the median round trip, and outliers do not move it") {
  CHECK(one_way_us({10}) == 5);
  CHECK(one_way_us({30, 10, 20}) == 10);
  CHECK(one_way_us({10, 12, 1000, 14}) == Approx(6.5));  // median of an even count: mean of the middle two
  CHECK(one_way_us({8, 8, 8, 9000, 8}) == 4);
  CHECK_THROWS_AS(one_way_us({}), std::invalid_argument);
}

TEST_CASE("the lower process starts every round trip") {
  CHECK(starts_ping_pong(0, 1));
  CHECK_FALSE(starts_ping_pong(1, 0));
  CHECK(starts_ping_pong(2, 7));
}
