#include "passes/key_set.hpp"

#include <random>
#include <set>

#include "support/catch.hpp"

using namespace ppsched;

TEST_CASE("key set: insert reports new keys, contains finds them") {
  KeySet s;
  CHECK(s.empty());
  CHECK_FALSE(s.contains(7));
  CHECK(s.insert(7));
  CHECK_FALSE(s.insert(7));
  CHECK(s.contains(7));
  CHECK(s.insert(0));
  CHECK(s.size() == 2);
}

TEST_CASE("key set: agrees with std::set through growth") {
  std::mt19937_64 rng(42);
  KeySet s(4);
  std::set<std::uint64_t> ref;
  for (int i = 0; i < 20000; ++i) {
    std::uint64_t k = rng() % 5000 * 0x100000001ULL;  // clustered, like actions differing in one field
    CHECK(s.insert(k) == ref.insert(k).second);
  }
  CHECK(s.size() == ref.size());
  for (std::uint64_t k = 0; k < 5000; ++k) CHECK(s.contains(k * 0x100000001ULL) == (ref.count(k * 0x100000001ULL) > 0));
}

TEST_CASE("key set: actions are keys, and a container never equals a plain action") {
  KeySet s;
  s.insert(action_key(Action::make(ActionKind::F, 1, 2)));
  CHECK(s.contains(action_key(Action::make(ActionKind::F, 1, 2))));
  CHECK_FALSE(s.contains(action_key(Action::make(ActionKind::F, 1, 3))));
  CHECK_FALSE(s.contains(action_key(Action::container(ActionKind::F, 2))));
  CHECK(action_key(Action::make(ActionKind::F, 1, 2)) != KeySet::kEmpty);
}
