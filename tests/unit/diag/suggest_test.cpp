#include "diag/suggest.hpp"

#include <array>

#include "support/catch.hpp"

using namespace ppsched;

TEST_CASE("edit distance is case-insensitive Levenshtein") {
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("SEND_F", "send_f") == 0);
}

TEST_CASE("closest_match suggests only near names") {
  constexpr std::array<std::string_view, 3> names = {"ZBVZeroBubble", "DualPipeV", "GPipe"};
  CHECK(closest_match("ZBVZeroBuble", names) == "ZBVZeroBubble");
  CHECK(closest_match("dualpipev", names) == "DualPipeV");
  CHECK_FALSE(closest_match("Interleaved1F1B", names));
}
