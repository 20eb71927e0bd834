// CPython 3.11's `set` of small ints, emulated slot for slot so that iterating it gives the
// order Python gives.
//
// PyTorch's `_add_unshard_reshard` keeps its active stages in a Python set and emits RESHARD
// for them in set-iteration order, which is table order, not insertion or sorted order. With
// one or two stages per rank at most one stage is evicted at a time and the order cannot show;
// with three or more it can:
//
//   add 0, add 8   ->  iterates 0, 8   (8 collides with 0 in slot 0 and goes to slot 1)
//   add 8, add 0   ->  iterates 8, 0   (the other way round: insertion order, not sorted)
//   add 5, add 13  ->  iterates 13, 5  (13 collides with 5 and goes to 5*5 + 1 = 26 & 7 = 2)
//
// The emulation follows Objects/setobject.c of CPython 3.11: an 8-slot table to start;
// `set_add_entry` probes slot i = hash & mask and, while i + 9 <= mask, the 9 slots after it
// (LINEAR_PROBES), then perturbs (perturb >>= 5; i = (5i + 1 + perturb) & mask); an insertion
// reuses the LAST deleted ("dummy") slot seen before the probe meets an unused slot (3.11
// overwrites its `freeslot` at every dummy), and otherwise takes the unused slot; when
// fill * 5 >= mask * 3 the table is rebuilt to the smallest power of two above 4 * used
// (2 * used beyond 50000 entries), re-inserting live entries in slot order. `discard` turns a
// slot into a dummy. Iteration walks the slots in index order, skipping unused and dummies.
//
// Keys are ints with CPython's hash: hash(k) == k, except hash(-1) == -2 (PyTorch's container
// placeholder stage is -1). Keys must lie within +-(2^61 - 2), where that rule holds.
// Not here: other key types, `pop`, set algebra; only what `_add_unshard_reshard` does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ppsched {

class PythonIntSet {
 public:
  PythonIntSet() : slots_(kMinSize) {}

  /// `s.add(key)`; no effect when present.
  void add(std::int64_t key);
  /// `s.discard(key)`; returns whether it was present.
  bool discard(std::int64_t key);
  /// `key in s`.
  bool contains(std::int64_t key) const { return find(key) != kNotFound; }
  /// `len(s)`.
  std::size_t size() const { return used_; }
  bool empty() const { return used_ == 0; }

  /// Calls f(key) for each key in Python's iteration order. `f` must not modify the set.
  template <class F>
  void for_each(F&& f) const {
    for (const Slot& slot : slots_)
      if (slot.state == State::Active) f(slot.key);
  }
  /// `list(s)`.
  std::vector<std::int64_t> items() const;

  /// Table size (mask + 1); exposed for tests.
  std::size_t table_size() const { return slots_.size(); }

 private:
  enum class State : std::uint8_t { Unused, Active, Dummy };
  struct Slot {
    std::int64_t key = 0;
    State state = State::Unused;
  };
  static constexpr std::size_t kMinSize = 8;
  static constexpr std::size_t kLinearProbes = 9;
  static constexpr unsigned kPerturbShift = 5;
  static constexpr std::size_t kNotFound = static_cast<std::size_t>(-1);

  static std::int64_t hash_of(std::int64_t key) { return key == -1 ? -2 : key; }
  std::size_t find(std::int64_t key) const;
  void resize(std::size_t min_used);

  std::vector<Slot> slots_;
  std::size_t fill_ = 0;  ///< active + dummy slots
  std::size_t used_ = 0;  ///< active slots
};

}  // namespace ppsched
