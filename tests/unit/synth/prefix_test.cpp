// synthesize_prefix: V-Half and V-Min cut after a number of slots are exact prefixes of the whole
// patterns, and say whether they were cut.
#include <algorithm>
#include <cstdint>

#include "support/catch.hpp"
#include "synth/synth.hpp"

using namespace ppsched;

TEST_CASE("a cut V pattern is a prefix of the whole one on every rank") {
  for (const char* family : {"VHalf", "VMin"})
    for (std::uint32_t p : {1u, 2u, 3u, 4u, 6u, 7u, 9u})
      for (std::uint32_t m : {1u, 2u, p, 2 * p + 1, 5 * p}) {
        SynthParams sp;
        sp.ranks = p;
        sp.microbatches = m;
        const Schedule whole = synthesize(family, sp);
        for (std::uint64_t slots : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{5}, std::uint64_t{6} * p,
                                    std::uint64_t{6} * m + 3, std::uint64_t{6} * (m + 2 * p), UINT64_MAX}) {
          CAPTURE(family, p, m, slots);
          bool complete = false;
          const Schedule cut = synthesize_prefix(family, sp, slots, complete);
          REQUIRE(cut.ranks.size() == whole.ranks.size());
          CHECK(cut.num_microbatches == whole.num_microbatches);
          CHECK(cut.placement.stage_to_rank == whole.placement.stage_to_rank);
          bool all_whole = true;
          for (std::size_t r = 0; r < p; ++r) {
            const auto& a = cut.ranks[r].actions;
            const auto& b = whole.ranks[r].actions;
            REQUIRE(a.size() <= b.size());
            CHECK(std::equal(a.begin(), a.end(), b.begin()));
            // Each slot places at most one action; only a whole program drains its W's after.
            CHECK((complete || a.size() <= slots));
            all_whole &= a.size() == b.size();
          }
          CHECK(complete == all_whole);
          if (slots == UINT64_MAX) CHECK(complete);
          // The last microbatch's first forward comes at slot 6(m-1) or later.
          if (slots <= 6 * std::uint64_t{m - 1}) CHECK_FALSE(complete);
        }
      }
}

TEST_CASE("synthesize_prefix builds any other family whole and checks its parameters as synthesize does") {
  SynthParams sp;
  sp.ranks = 4;
  sp.microbatches = 8;
  bool complete = false;
  const Schedule cut = synthesize_prefix("ZBVZeroBubble", sp, 3, complete);
  CHECK(complete);
  const Schedule whole = synthesize("ZBVZeroBubble", sp);
  for (std::size_t r = 0; r < 4; ++r) CHECK(cut.ranks[r].actions == whole.ranks[r].actions);
  CHECK_THROWS_AS(synthesize_prefix("NoSuchFamily", sp, 3, complete), SynthError);
  sp.microbatches = 0;
  CHECK_THROWS_AS(synthesize_prefix("VHalf", sp, 3, complete), SynthError);
}
