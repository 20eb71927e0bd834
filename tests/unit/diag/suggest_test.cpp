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

TEST_CASE("closest_match skips candidates whose length alone rules them out") {
  std::string_view names[] = {"F", "SEND_F", "OVERLAP_F_B"};
  // 4 edits from SEND_F, and a 10-letter word may be at most 3 away: no suggestion.
  CHECK_FALSE(closest_match("SEND_FXYZW", names));
  CHECK(closest_match("SEND_FXYZ", names) == "SEND_F");  // 3 edits, 9 letters: allowed
  CHECK(closest_match("SEND_FX", names) == "SEND_F");
  // A long cell is far from every short name: nothing suggested (and no edit distance computed).
  CHECK_FALSE(closest_match(std::string(100000, 'F'), names));
  CHECK(closest_match("OVERLAP_F_", names) == "OVERLAP_F_B");
}
