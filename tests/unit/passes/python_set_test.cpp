// PythonIntSet iterates as CPython 3.11's set does. Every expected order below was worked out
// by hand from setobject.c's probing (and agrees with what python3.11 prints).
#include "passes/python_set.hpp"

#include <vector>

#include "support/catch.hpp"

using ppsched::PythonIntSet;
using Keys = std::vector<std::int64_t>;

namespace {

PythonIntSet with(std::initializer_list<std::int64_t> keys) {
  PythonIntSet s;
  for (auto k : keys) s.add(k);
  return s;
}

}  // namespace

TEST_CASE("python set: a fresh set is empty and small") {
  PythonIntSet s;
  CHECK(s.empty());
  CHECK(s.items().empty());
  CHECK(s.table_size() == 8);
  CHECK_FALSE(s.contains(0));
}

TEST_CASE("python set: keys without collisions iterate by slot, so ascending") {
  CHECK(with({3, 1, 2}).items() == Keys{1, 2, 3});
}

TEST_CASE("python set: a colliding key goes where the probe sequence sends it") {
  // 0 -> slot 0; 8 -> slot 0 is taken, perturb 8 >> 5 = 0, i = 0*5 + 1 = 1.
  CHECK(with({0, 8}).items() == Keys{0, 8});
  // 8 -> slot 0; 0 -> slot 1 the same way: insertion order, not sorted.
  CHECK(with({8, 0}).items() == Keys{8, 0});
  // 5 -> slot 5; 13 -> slot 5 is taken, i = 5*5 + 1 = 26 & 7 = 2: before 5.
  CHECK(with({5, 13}).items() == Keys{13, 5});
}

TEST_CASE("python set: -1 hashes to -2, the slot near the end") {
  // (size_t)-2 & 7 = 6.
  CHECK(with({-1, 0, 7}).items() == Keys{0, -1, 7});
}

TEST_CASE("python set: add of a present key and discard of an absent one change nothing") {
  PythonIntSet s = with({8, 0});
  s.add(8);
  CHECK_FALSE(s.discard(3));
  CHECK(s.size() == 2);
  CHECK(s.items() == Keys{8, 0});
}

TEST_CASE("python set: a discarded slot is reused by a later insertion") {
  // 8 -> slot 0, 0 -> 1, 1 -> 6 (1, then 1*5+1), 2 -> 2. Discarding 8 leaves a dummy at 0;
  // adding 8 again finds it first and the probe ends at an unused slot: 8 goes back to 0.
  PythonIntSet s = with({8, 0, 1, 2});
  CHECK(s.items() == Keys{8, 0, 2, 1});
  CHECK(s.discard(8));
  CHECK(s.items() == Keys{0, 2, 1});
  s.add(8);
  CHECK(s.items() == Keys{8, 0, 2, 1});
}

TEST_CASE("python set: the last dummy on the probe path is the one reused") {
  // 0 -> 0, 8 -> 1, 16 -> 6 (0, 1, then 1*5+1). Discard 0 and 16: dummies at 0 and 6.
  // 24 probes 0 (dummy), 1 (8), 6 (dummy), 7 (unused): CPython 3.11 keeps the last dummy.
  PythonIntSet s = with({0, 8, 16});
  s.discard(0);
  s.discard(16);
  s.add(24);
  CHECK(s.items() == Keys{8, 24});
}

TEST_CASE("python set: growing rebuilds the table in old slot order") {
  // Four keys fit in 8 slots (fill * 5 < 7 * 3); the fifth makes 32 (smallest power of two
  // above 4 * 5), and each key then sits in its own slot: ascending.
  PythonIntSet s = with({8, 0, 1, 2});
  CHECK(s.table_size() == 8);
  s.add(3);
  CHECK(s.table_size() == 32);
  CHECK(s.items() == Keys{0, 1, 2, 3, 8});
}

TEST_CASE("python set: dummies count toward the fill that triggers a rebuild") {
  // 0..3 then discard them all: fill stays 4, used 0. The next new key makes fill 5 and the
  // table is rebuilt to 8 slots for used = 1, with the dummies gone.
  PythonIntSet s = with({0, 1, 2, 3});
  for (std::int64_t k : {0, 1, 2, 3}) s.discard(k);
  s.add(12);
  CHECK(s.table_size() == 8);
  CHECK(s.items() == Keys{12});
  s.add(4);  // 12 holds slot 4, so 4 goes to 4*5 + 1 = 21 & 7 = 5
  CHECK(s.items() == Keys{12, 4});
}

TEST_CASE("python set: membership follows adds and discards") {
  PythonIntSet s;
  for (std::int64_t k = 0; k < 100; ++k) s.add(k * 8);
  for (std::int64_t k = 0; k < 100; k += 2) s.discard(k * 8);
  CHECK(s.size() == 50);
  for (std::int64_t k = 0; k < 100; ++k) CHECK(s.contains(k * 8) == (k % 2 == 1));
}
