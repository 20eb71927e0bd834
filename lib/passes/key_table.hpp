// A table of values by (kind, stage, microbatch), the key of an action's events and of its
// results: the timed simulator's event slots (sim/timed.cpp), the run plan's producers
// (run/plan.cpp), the validator's action index (check/action_index.cpp) and PyTorch's lock-step
// done-set (sim/pytorch_steps.cpp). A flat array over the whole kinds x stages x microbatches
// grid when the grid is small next to the schedule, else a hash map of the keys touched.
//
// Why not always the array: stages and microbatches are whatever the input names, and the grid
// is their product. Real schedules fill it (every stage runs every microbatch), but one malformed
// action at microbatch 4e9 would ask for an array of 4e9 x kinds cells. Such input must cost
// speed (a hash lookup per access), never memory: the array is used only while the stage x
// microbatch grid has at most 16 cells per step of the schedule, plus 64 so that tiny schedules
// are always dense (dense_grid_limit), which keeps it a small multiple of the schedule's size.
//
// Keys run stage-major, then microbatch, then kind: a rank walks its stages' microbatches in
// order, so its own events and its neighbours' stream through memory, faster than
// microbatch-major (docs/bench.md, "Figures behind the simulator's choices"). Iteration order
// over a sparse table is unspecified.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ppsched {

/// The largest stage x microbatch grid that a schedule of `steps` steps (or actions) indexes
/// with a flat array. Users that keep no table but size a per-microbatch array by it
/// (sim/aggregate.cpp) share the bound.
constexpr double dense_grid_limit(std::size_t steps) { return 16.0 * (static_cast<double>(steps) + 64); }

/// Values of type V by key; `Kinds` keys per (stage, microbatch) cell. Every value starts as the
/// table's `empty` value.
template <typename V, std::uint32_t Kinds>
class KeyTable {
 public:
  using Key = std::uint64_t;

  KeyTable() = default;
  /// A table over stages x microbatches for a schedule of `steps` steps, dense when the grid
  /// is within dense_grid_limit(steps).
  KeyTable(std::uint32_t stages, std::uint32_t microbatches, std::size_t steps, const V& empty = V{})
      : dense_(static_cast<double>(stages) * static_cast<double>(microbatches) <= dense_grid_limit(steps)),
        stages_(stages),
        microbatches_(microbatches),
        empty_(empty) {
    if (dense_) cells_.assign(std::size_t{Kinds} * stages * microbatches, empty);
  }

  bool dense() const { return dense_; }
  std::uint32_t stages() const { return stages_; }
  std::uint32_t microbatches() const { return microbatches_; }

  /// Whether (stage, microbatch) is in the grid: only its cells have keys.
  bool holds(std::uint64_t stage, std::uint64_t microbatch) const {
    return stage < stages_ && microbatch < microbatches_;
  }
  /// The key of a cell in the grid (holds(stage, microbatch), kind < Kinds).
  Key key(std::uint32_t kind, std::uint64_t stage, std::uint64_t microbatch) const {
    return (stage * microbatches_ + microbatch) * Kinds + kind;
  }
  std::uint32_t kind_of(Key k) const { return static_cast<std::uint32_t>(k % Kinds); }
  std::uint32_t stage_of(Key k) const { return static_cast<std::uint32_t>(k / Kinds / microbatches_); }
  std::uint32_t microbatch_of(Key k) const { return static_cast<std::uint32_t>(k / Kinds % microbatches_); }

  /// The value of key `k`; a sparse table adds it, as `empty`, when it has none.
  V& operator[](Key k) { return dense_ ? cells_[k] : sparse_.try_emplace(k, empty_).first->second; }
  /// The value of key `k`: `empty` where none was set.
  const V& get(Key k) const {
    if (dense_) return cells_[k];
    auto it = sparse_.find(k);
    return it == sparse_.end() ? empty_ : it->second;
  }

  /// Calls f(stage, microbatch, value) for every cell of `kind` whose value is not `empty`: in
  /// key order when dense, in no particular order when sparse.
  template <typename F>
  void for_each(std::uint32_t kind, F f) const {
    if (dense_) {
      for (Key k = kind; k < cells_.size(); k += Kinds)
        if (!(cells_[k] == empty_)) f(stage_of(k), microbatch_of(k), cells_[k]);
      return;
    }
    for (const auto& [k, v] : sparse_)
      if (kind_of(k) == kind && !(v == empty_)) f(stage_of(k), microbatch_of(k), v);
  }

 private:
  bool dense_ = true;
  std::uint32_t stages_ = 0, microbatches_ = 0;
  V empty_{};
  std::vector<V> cells_;               ///< dense: indexed by key
  std::unordered_map<Key, V> sparse_;  ///< sparse: only the keys touched
};

}  // namespace ppsched
