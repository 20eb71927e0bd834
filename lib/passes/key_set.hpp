// A flat open-addressing set of 64-bit keys: the membership structure behind the passes'
// per-rank "actions done" sets (an Action is 8 bytes, so it is its own key).
//
// Linear probing over a power-of-two table kept at most half full; no deletion (the passes only
// ever add). One key value, kEmpty, is reserved and cannot be stored. Iteration order is
// unspecified: nothing that reaches the output may depend on it (python_set.hpp is for that).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/action.hpp"

namespace ppsched {

class KeySet {
 public:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

  KeySet() = default;
  explicit KeySet(std::size_t expected) { reserve(expected); }

  /// Makes room for `n` keys without rehashing.
  void reserve(std::size_t n) {
    std::size_t want = 16;
    while (want < 2 * n) want <<= 1;
    if (want > slots_.size()) rehash(want);
  }

  /// Adds `key` (which must not be kEmpty); returns true when it was not present.
  bool insert(std::uint64_t key) {
    if (2 * (size_ + 1) > slots_.size()) rehash(slots_.empty() ? 16 : slots_.size() * 2);
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = mix(key) & mask;; i = (i + 1) & mask) {
      if (slots_[i] == key) return false;
      if (slots_[i] == kEmpty) {
        slots_[i] = key;
        ++size_;
        return true;
      }
    }
  }

  bool contains(std::uint64_t key) const {
    if (slots_.empty()) return false;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = mix(key) & mask;; i = (i + 1) & mask) {
      if (slots_[i] == key) return true;
      if (slots_[i] == kEmpty) return false;
    }
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  // MurmurHash3's 64-bit finalizer: keys differ mostly in their low (microbatch) bits.
  static std::size_t mix(std::uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return static_cast<std::size_t>(k);
  }

  void rehash(std::size_t capacity) {
    std::vector<std::uint64_t> old(capacity, kEmpty);
    old.swap(slots_);
    const std::size_t mask = capacity - 1;
    for (std::uint64_t key : old) {
      if (key == kEmpty) continue;
      std::size_t i = mix(key) & mask;
      while (slots_[i] != kEmpty) i = (i + 1) & mask;
      slots_[i] = key;
    }
  }

  std::vector<std::uint64_t> slots_;
  std::size_t size_ = 0;
};

/// An action as a KeySet key. Flags take part, so a container never equals a plain action;
/// the all-ones value (kind 0xFF) is never a real action.
inline std::uint64_t action_key(const Action& a) { return std::bit_cast<std::uint64_t>(a); }

}  // namespace ppsched
