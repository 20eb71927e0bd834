#include "passes/microbatch_set.hpp"

#include <random>
#include <set>
#include <utility>

#include "support/catch.hpp"

using namespace ppsched;

TEST_CASE("microbatch set: pairs are distinct by group and microbatch") {
  MicrobatchSet s;
  CHECK_FALSE(s.contains(1, 0));
  CHECK(s.insert(1, 0));
  CHECK_FALSE(s.insert(1, 0));
  CHECK(s.contains(1, 0));
  CHECK_FALSE(s.contains(2, 0));
  CHECK_FALSE(s.contains(1, 1));
  CHECK(s.insert(2, 0));
}

TEST_CASE("microbatch set: huge microbatches and 'none' are stored too") {
  MicrobatchSet s;
  const std::uint32_t none = Action::kNoMicrobatch;
  CHECK(s.insert(5, none));
  CHECK(s.insert(5, Action::kMaxMicrobatch));
  CHECK(s.contains(5, none));
  CHECK(s.contains(5, Action::kMaxMicrobatch));
  CHECK_FALSE(s.contains(5, 0));
  // A bitmap that later grows over a sparsely stored microbatch still finds it.
  CHECK(s.insert(6, 5000));
  for (std::uint32_t m = 0; m < 6000; ++m) s.insert(6, m);
  CHECK(s.contains(6, 5000));
  CHECK_FALSE(s.insert(6, 5000));
}

TEST_CASE("microbatch set: agrees with std::set on mixed dense and sparse use") {
  std::mt19937 rng(7);
  MicrobatchSet s;
  std::set<std::pair<std::uint64_t, std::uint32_t>> ref;
  for (int i = 0; i < 50000; ++i) {
    std::uint64_t g = rng() % 40;
    std::uint32_t m = rng() % 4 == 0 ? static_cast<std::uint32_t>(rng()) : rng() % 3000;
    if (rng() % 3 == 0) {
      CHECK(s.contains(g, m) == (ref.count({g, m}) > 0));
    } else {
      CHECK(s.insert(g, m) == ref.insert({g, m}).second);
    }
  }
  for (const auto& [g, m] : ref) CHECK(s.contains(g, m));
}
