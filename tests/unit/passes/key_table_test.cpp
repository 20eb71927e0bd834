#include "passes/key_table.hpp"

#include <map>
#include <random>
#include <set>
#include <tuple>

#include "support/catch.hpp"

using namespace ppsched;

namespace {
using Cell = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>;  // (kind, stage, microbatch)

template <typename T>
std::set<std::pair<Cell, int>> cells_of(const T& t, std::uint32_t kinds) {
  std::set<std::pair<Cell, int>> out;
  for (std::uint32_t kind = 0; kind < kinds; ++kind)
    t.for_each(kind, [&](std::uint64_t st, std::uint64_t m, int v) {
      out.insert({{kind, static_cast<std::uint32_t>(st), static_cast<std::uint32_t>(m)}, v});
    });
  return out;
}
}  // namespace

TEST_CASE("key table: dense while the stage x microbatch grid is within 16 cells a step, plus 64") {
  CHECK(dense_grid_limit(0) == 1024);
  CHECK(dense_grid_limit(100) == 16 * 164);
  CHECK(KeyTable<int, 3>(1, 1024, 0).dense());
  CHECK_FALSE(KeyTable<int, 3>(1, 1025, 0).dense());
  CHECK(KeyTable<int, 3>(4, 4 * 164, 100).dense());
  CHECK_FALSE(KeyTable<int, 3>(4, 4 * 164 + 1, 100).dense());
  CHECK(KeyTable<int, 3>(0, 0, 0).dense());
  // The kinds do not count: a grid of 2 x 512 cells is dense with 1 kind or with 8.
  CHECK(KeyTable<int, 8>(2, 512, 0).dense());
}

TEST_CASE("key table: keys run stage-major, then microbatch, then kind, and decode back") {
  const KeyTable<int, 6> t(3, 5, 100);
  CHECK(t.key(0, 0, 0) == 0);
  CHECK(t.key(1, 0, 0) == 1);
  CHECK(t.key(0, 0, 1) == 6);
  CHECK(t.key(0, 1, 0) == 30);
  CHECK(t.key(5, 2, 4) == 89);  // the last of 3 x 5 x 6
  for (std::uint32_t st = 0; st < 3; ++st)
    for (std::uint32_t m = 0; m < 5; ++m)
      for (std::uint32_t k = 0; k < 6; ++k) {
        const auto key = t.key(k, st, m);
        CHECK(t.kind_of(key) == k);
        CHECK(t.stage_of(key) == st);
        CHECK(t.microbatch_of(key) == m);
      }
  CHECK(t.holds(2, 4));
  CHECK_FALSE(t.holds(3, 0));
  CHECK_FALSE(t.holds(0, 5));
}

TEST_CASE("key table: a microbatch at 4e9 makes the table sparse, and it answers as a dense one") {
  // A dense table would be 2 x 4e9 x 2 cells; the sparse one holds the three keys touched.
  KeyTable<std::uint32_t, 2> t(2, 4000000001u, 10, 0xFFFFFFFF);
  REQUIRE_FALSE(t.dense());
  CHECK(t.get(t.key(1, 1, 4000000000u)) == 0xFFFFFFFF);
  t[t.key(1, 1, 4000000000u)] = 7;
  t[t.key(0, 0, 0)] = 8;
  CHECK(t[t.key(1, 0, 3)] == 0xFFFFFFFF);  // created as the empty value
  CHECK(t.get(t.key(1, 1, 4000000000u)) == 7);
  CHECK(t.get(t.key(0, 0, 0)) == 8);
  CHECK(t.get(t.key(0, 1, 4000000000u)) == 0xFFFFFFFF);
  CHECK(t.stage_of(t.key(1, 1, 4000000000u)) == 1);
  CHECK(t.microbatch_of(t.key(1, 1, 4000000000u)) == 4000000000u);
  std::vector<std::uint64_t> seen;
  t.for_each(1, [&](std::uint64_t st, std::uint64_t m, std::uint32_t v) {
    CHECK(v == 7);
    seen.push_back(st * 10000000000ull + m);
  });
  CHECK(seen == std::vector<std::uint64_t>{14000000000ull});
}

TEST_CASE("key table: dense and sparse tables of one grid agree with a map through random writes") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const std::uint32_t stages = 1 + rng() % 6, mbs = 1 + rng() % 40;
    KeyTable<int, 4> dense(stages, mbs, 0, -1);
    KeyTable<int, 4> sparse(stages, mbs * 2000, 0, -1);  // a grid too big for no steps; used below mbs
    REQUIRE(dense.dense());
    REQUIRE_FALSE(sparse.dense());
    std::map<Cell, int> ref;
    for (int i = 0; i < 300; ++i) {
      const std::uint32_t k = rng() % 4, st = rng() % stages, m = rng() % mbs;
      const int v = static_cast<int>(rng() % 100);
      if (rng() % 3 == 0) {
        const auto it = ref.find({k, st, m});
        const int want = it == ref.end() ? -1 : it->second;
        CHECK(dense.get(dense.key(k, st, m)) == want);
        CHECK(sparse.get(sparse.key(k, st, m)) == want);
        continue;
      }
      dense[dense.key(k, st, m)] = v;
      sparse[sparse.key(k, st, m)] = v;
      ref[{k, st, m}] = v;
    }
    std::set<std::pair<Cell, int>> want(ref.begin(), ref.end());
    CHECK(cells_of(dense, 4) == want);
    CHECK(cells_of(sparse, 4) == want);
  }
}

TEST_CASE("key table: for_each visits a dense table in key order and skips the empty value") {
  KeyTable<int, 2> t(2, 3, 6);
  t[t.key(1, 1, 2)] = 3;
  t[t.key(1, 0, 1)] = 5;
  t[t.key(0, 0, 0)] = 9;
  t[t.key(1, 1, 0)] = 0;  // the empty value: not visited
  std::vector<std::tuple<std::uint64_t, std::uint64_t, int>> seen;
  t.for_each(1, [&](std::uint64_t st, std::uint64_t m, int v) { seen.emplace_back(st, m, v); });
  CHECK(seen == std::vector<std::tuple<std::uint64_t, std::uint64_t, int>>{{0, 1, 5}, {1, 2, 3}});
}
