// A set of (group, microbatch) pairs, where a group is any 64-bit name (e.g. rank, stage and
// kind of an action) and the microbatch a 32-bit index: the passes' "has this action been seen"
// sets, laid out for how they are used.
//
// Passes walk microbatches mostly in ascending order within a few groups, so each group keeps
// a bitmap over microbatches and consecutive lookups hit the same cache line; a hash set of
// whole actions would miss the cache on nearly every lookup. The groups themselves sit in a
// small open-addressing table. A microbatch far beyond what a group holds (a bitmap must stay
// at least 1/64 dense, so memory stays proportional to the entries) goes to a KeySet
// instead: malformed input costs speed, never memory or correctness.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "passes/key_set.hpp"

namespace ppsched {

class MicrobatchSet {
 public:
  /// Adds the pair; returns true when it was not present.
  bool insert(std::uint64_t group, std::uint32_t microbatch) {
    const std::uint32_t g = group_index(group, /*create=*/true);
    Group& grp = groups_[g];
    ++grp.entries;
    const std::size_t word = microbatch / 64;
    const std::size_t most = grp.entries + 64;  // words: at least one entry per 64 of them
    if (word >= grp.bits.size() && word < most)
      grp.bits.resize(std::min(std::max(word + 1, grp.bits.size() * 2), most), 0);
    if (word < grp.bits.size()) {
      const std::uint64_t bit = std::uint64_t{1} << (microbatch % 64);
      // A microbatch stored sparsely before the bitmap grew over it stays there.
      if ((grp.bits[word] & bit) || (!sparse_.empty() && sparse_.contains(sparse_key(g, microbatch)))) {
        --grp.entries;
        return false;
      }
      grp.bits[word] |= bit;
      return true;
    }
    if (sparse_.insert(sparse_key(g, microbatch))) return true;
    --grp.entries;
    return false;
  }

  bool contains(std::uint64_t group, std::uint32_t microbatch) const {
    const std::uint32_t g = find_group(group);
    if (g == kMissing) return false;
    const Group& grp = groups_[g];
    const std::size_t word = microbatch / 64;
    if (word < grp.bits.size() && (grp.bits[word] >> (microbatch % 64) & 1)) return true;
    return !sparse_.empty() && sparse_.contains(sparse_key(g, microbatch));
  }

 private:
  static constexpr std::uint32_t kMissing = 0xFFFFFFFF;

  struct Group {
    std::vector<std::uint64_t> bits;
    std::size_t entries = 0;
  };
  struct Slot {
    std::uint64_t name;
    std::uint32_t index = kMissing;
  };

  static std::uint64_t sparse_key(std::uint32_t g, std::uint32_t microbatch) {
    return static_cast<std::uint64_t>(g) << 32 | microbatch;
  }
  static std::size_t mix(std::uint64_t k) {
    k ^= k >> 31;
    k *= 0x9e3779b97f4a7c15ULL;
    k ^= k >> 29;
    return static_cast<std::size_t>(k);
  }

  std::uint32_t find_group(std::uint64_t name) const {
    if (slots_.empty()) return kMissing;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = mix(name) & mask;; i = (i + 1) & mask) {
      if (slots_[i].index == kMissing) return kMissing;
      if (slots_[i].name == name) return slots_[i].index;
    }
  }

  std::uint32_t group_index(std::uint64_t name, bool create) {
    std::uint32_t g = find_group(name);
    if (g != kMissing || !create) return g;
    if (2 * (groups_.size() + 1) > slots_.size()) {
      std::vector<Slot> old(slots_.empty() ? 16 : slots_.size() * 2);
      old.swap(slots_);
      for (const Slot& s : old)
        if (s.index != kMissing) place(s);
    }
    g = static_cast<std::uint32_t>(groups_.size());
    groups_.emplace_back();
    place({name, g});
    return g;
  }

  void place(const Slot& s) {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = mix(s.name) & mask;
    while (slots_[i].index != kMissing) i = (i + 1) & mask;
    slots_[i] = s;
  }

  std::vector<Group> groups_;
  std::vector<Slot> slots_;
  KeySet sparse_;
};

}  // namespace ppsched
