// The Zero Bubble authors' slot-by-slot reorder of V-Half and V-Min (v_slot_reorder.hpp).
//
// A rank's actions are lists of slots by kind: 0 its first-chunk forward, 1 its second-chunk
// forward, 2 the second chunk's input gradient, 3 the first chunk's, then the weight gradients,
// either one list (4: in the order of the input gradients) or two (4: the second chunk's, 5: the
// first's). Memory is counted as the authors count it: +1 per forward, -1 per W.
#include "synth/v_slot_reorder.hpp"

#include <algorithm>
#include <queue>
#include <tuple>

namespace ppsched::vslot {

namespace {

using Slots = std::vector<std::int64_t>;
using Rank = std::vector<Slots>;  // kind -> microbatch -> slot

constexpr int kForward0 = 0, kForward1 = 1, kInput1 = 2, kInput0 = 3, kWeight = 4;
constexpr std::int8_t kFree = -1;

bool is_input_grad(int kind) { return kind == kInput1 || kind == kInput0; }

// The W's in the free slots: each after an input gradient, the second chunk's first when they are
// split (`split`: lists 4 and 5, else one list 4), those left after the last action.
void put_weight_grads(Rank& rank, bool split) {
  std::int64_t bound = 0;
  for (int k = 0; k < 4; ++k)
    if (!rank[k].empty()) bound = std::max(bound, rank[k].back());
  rank.resize(split ? 6 : 5);
  std::size_t next[4] = {0, 0, 0, 0};
  int owed[2] = {0, 0};
  // The slots of kinds 0-3 are distinct, so at most one of them sits in a slot.
  std::int64_t slot = 0;
  for (; slot <= bound; ++slot) {
    int here = -1;
    for (int k = 0; k < 4; ++k)
      if (next[k] < rank[k].size() && rank[k][next[k]] == slot) here = k;
    if (here >= 0) {
      ++next[here];
      if (is_input_grad(here)) ++owed[split ? here - kInput1 : 0];
      continue;
    }
    for (int w = 0; w < 2; ++w)
      if (owed[w] > 0) {
        rank[kWeight + w].push_back(slot);
        --owed[w];
        break;
      }
  }
  for (int w = 0; w < 2; ++w)
    for (; owed[w] > 0; --owed[w]) rank[kWeight + w].push_back(slot++);
}

// A rank's slots as a row: the kind in each slot, or kFree.
std::vector<std::int8_t> row_of(const Rank& rank) {
  std::int64_t end = 0;
  for (const Slots& s : rank)
    for (std::int64_t t : s) end = std::max(end, t + 1);
  std::vector<std::int8_t> row(static_cast<std::size_t>(end), kFree);
  for (std::size_t k = 0; k < rank.size(); ++k)
    for (std::int64_t t : rank[k]) row[static_cast<std::size_t>(t)] = static_cast<std::int8_t>(k);
  return row;
}

// The rank's memory peak, or more than `most` once it passes it (the scan stops there). Without
// W's in the row (`weights_placed` false), every free slot after an input gradient runs a deferred
// W.
int peak_of(const std::vector<std::int8_t>& row, bool weights_placed, int most = 1 << 30) {
  int level = 0, peak = 0, owed = 0;
  for (std::int8_t kind : row) {
    if (kind == kForward0 || kind == kForward1) {
      ++level;
    } else if (kind == kWeight) {
      --level;
    } else if (is_input_grad(kind)) {
      ++owed;
    } else if (!weights_placed && owed > 0) {
      --level;
      --owed;
    }
    peak = std::max(peak, level);
    if (peak > most) return peak;
  }
  return peak;
}

// Where each action is visited: in slot order over all ranks, ties by rank, then kind.
struct Head {
  std::int64_t slot;
  std::uint32_t rank;
  int kind;
  bool operator>(const Head& o) const { return std::tie(slot, rank, kind) > std::tie(o.slot, o.rank, o.kind); }
};
class SlotOrder {
 public:
  explicit SlotOrder(const std::vector<Rank>& ranks) : ranks_(ranks), next_(ranks.size()) {
    for (std::uint32_t r = 0; r < ranks.size(); ++r) {
      next_[r].assign(ranks[r].size(), 0);
      for (std::size_t k = 0; k < ranks[r].size(); ++k) push(r, static_cast<int>(k));
    }
  }
  bool empty() const { return heap_.empty(); }
  // The next action (its slot as it was when it became a head: a slot changes only once visited).
  Head pop(std::size_t& microbatch) {
    const Head h = heap_.top();
    heap_.pop();
    microbatch = next_[h.rank][h.kind]++;
    push(h.rank, h.kind);
    return h;
  }

 private:
  void push(std::uint32_t r, int k) {
    const std::size_t m = next_[r][static_cast<std::size_t>(k)];
    if (m < ranks_[r][static_cast<std::size_t>(k)].size())
      heap_.push({ranks_[r][static_cast<std::size_t>(k)][m], r, k});
  }
  const std::vector<Rank>& ranks_;
  std::vector<std::vector<std::size_t>> next_;
  std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heap_;
};

// Runs the order eagerly in unit time (transfers free) and makes each action's start its slot.
// False when an action comes before one of its inputs.
bool eager_unit_slots(std::vector<Rank>& ranks) {
  const std::size_t P = ranks.size();
  std::vector<Rank> end(P);
  for (std::size_t r = 0; r < P; ++r) {
    end[r].resize(ranks[r].size());
    for (std::size_t k = 0; k < ranks[r].size(); ++k) end[r][k].assign(ranks[r][k].size(), -1);
  }
  std::vector<std::int64_t> rank_free(P, 0);
  SlotOrder order(ranks);
  std::vector<std::pair<Head, std::size_t>> visited;
  while (!order.empty()) {
    std::size_t m = 0;
    const Head h = order.pop(m);
    const auto k = static_cast<std::size_t>(h.kind);
    std::int64_t ready = rank_free[h.rank];
    auto after = [&](std::size_t r, std::size_t kind, std::size_t mb) {
      const std::int64_t e = end[r][kind][mb];
      if (e < 0) return false;
      ready = std::max(ready, e);
      return true;
    };
    bool ok = true;
    if ((h.kind == kForward0 || h.kind == kInput1) && h.rank > 0) ok &= after(h.rank - 1, k, m);
    if ((h.kind == kForward1 || h.kind == kInput0) && h.rank + 1 < P) ok &= after(h.rank + 1, k, m);
    if (h.kind > 0 && h.kind < kWeight) ok &= after(h.rank, k - 1, m);
    if (m > 0) ok &= after(h.rank, k, m - 1);
    if (!ok) return false;
    end[h.rank][k][m] = rank_free[h.rank] = ready + 1;
  }
  for (std::size_t r = 0; r < P; ++r)
    for (std::size_t k = 0; k < ranks[r].size(); ++k)
      for (std::size_t m = 0; m < ranks[r][k].size(); ++m) ranks[r][k][m] = end[r][k][m] - 1;
  return true;
}

// One pass of the reorder (the file comment of v_slot_reorder.hpp); `with_weights`: the first.
bool reorder_pass(std::vector<Rank>& ranks, std::uint32_t microbatches, bool with_weights) {
  const std::size_t P = ranks.size();
  if (with_weights)
    for (Rank& rank : ranks) put_weight_grads(rank, false);
  std::vector<std::vector<std::int8_t>> rows;
  int most = 0;
  for (const Rank& rank : ranks) {
    rows.push_back(row_of(rank));
    most = std::max(most, peak_of(rows.back(), with_weights));
  }
  // 0: the warm-up, until rank 0's first first-chunk input gradient; 1: up to the last first-chunk
  // forward, which keep their slots; 2: the cool-down.
  int phase = 0;
  SlotOrder order(ranks);
  std::vector<std::int64_t> backwards;
  while (!order.empty()) {
    std::size_t m = 0;
    const Head h = order.pop(m);
    const auto k = static_cast<std::size_t>(h.kind);
    if (h.kind == kInput0 && h.rank == 0 && phase == 0) phase = 1;
    if (phase == 1) {
      if (h.kind == kForward0 && m + 1 == microbatches) phase = 2;
      continue;
    }
    if (phase == 0 && !with_weights) continue;
    Rank& rank = ranks[h.rank];
    std::int64_t earliest = -1;
    if ((h.kind == kForward0 || h.kind == kInput1) && h.rank > 0)
      earliest = std::max(earliest, ranks[h.rank - 1][k][m]);
    if ((h.kind == kForward1 || h.kind == kInput0) && h.rank + 1 < P)
      earliest = std::max(earliest, ranks[h.rank + 1][k][m]);
    if (h.kind > 0 && h.kind < kWeight) earliest = std::max(earliest, rank[k - 1][m]);
    if (h.kind == kWeight) {  // the m-th W follows the m-th input gradient in slot order
      backwards.assign(rank[kInput1].begin(), rank[kInput1].end());
      backwards.insert(backwards.end(), rank[kInput0].begin(), rank[kInput0].end());
      if (m >= backwards.size()) return false;
      std::nth_element(backwards.begin(), backwards.begin() + static_cast<std::ptrdiff_t>(m), backwards.end());
      earliest = std::max(earliest, backwards[m]);
    }
    if (m > 0) earliest = std::max(earliest, rank[k][m - 1]);
    ++earliest;
    if (earliest > h.slot) return false;
    // The earliest free slot that keeps the rank's peak at most the pattern's; else where it was.
    // With the W's placed, only a forward moved earlier can raise the peak (an input gradient
    // holds nothing, a W frees), and every rank's peak is at most the pattern's all along.
    std::vector<std::int8_t>& row = rows[h.rank];
    const bool raises = !with_weights || h.kind == kForward0 || h.kind == kForward1;
    for (std::int64_t t = earliest; t < h.slot; ++t) {
      if (row[static_cast<std::size_t>(t)] != kFree) continue;
      std::swap(row[static_cast<std::size_t>(t)], row[static_cast<std::size_t>(h.slot)]);
      if (!raises || peak_of(row, with_weights, most) <= most) {
        rank[k][m] = t;
        break;
      }
      std::swap(row[static_cast<std::size_t>(t)], row[static_cast<std::size_t>(h.slot)]);
    }
  }
  if (!with_weights)
    for (Rank& rank : ranks) put_weight_grads(rank, false);
  return eager_unit_slots(ranks);
}

}  // namespace

std::array<std::int64_t, 4> pattern_offsets(std::uint32_t R, std::uint32_t i, bool half) {
  if (half) {
    const std::int64_t g = R % 2 == 0 ? 3 : 0;
    return {2 * std::int64_t{i}, 3 * std::int64_t{R} - 2 - i, 3 * std::int64_t{R} + g - 1 + 2 * std::int64_t{i},
            6 * std::int64_t{R} + g - 2 - i};
  }
  const std::int64_t g = R % 3 == 0 ? 2 : 0;
  return {std::int64_t{i}, 2 * std::int64_t{R} - 1 - i, 2 * std::int64_t{R} + g + i, 4 * std::int64_t{R} + g - 1 - i};
}

std::optional<std::vector<std::vector<Action>>> slot_reordered(std::uint32_t ranks, std::uint32_t microbatches,
                                                               bool half) {
  if (ranks < 2 || microbatches == 0) return std::nullopt;
  std::vector<Rank> slots(ranks, Rank(4));
  for (std::uint32_t r = 0; r < ranks; ++r) {
    const auto offset = pattern_offsets(ranks, r, half);
    for (int k = 0; k < 4; ++k)
      for (std::uint32_t m = 0; m < microbatches; ++m) slots[r][k].push_back(offset[k] + 6 * std::int64_t{m});
  }
  for (bool with_weights : {true, false}) {
    if (!reorder_pass(slots, microbatches, with_weights)) return std::nullopt;
    for (Rank& rank : slots) rank.resize(4);
  }
  std::vector<std::vector<Action>> programs(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r) {
    put_weight_grads(slots[r], true);
    const auto first = static_cast<std::uint16_t>(r), second = static_cast<std::uint16_t>(2 * ranks - 1 - r);
    const ActionKind kind_of[6] = {ActionKind::F, ActionKind::F, ActionKind::I,
                                   ActionKind::I, ActionKind::W, ActionKind::W};
    const std::uint16_t stage_of[6] = {first, second, second, first, second, first};
    std::vector<std::pair<std::int64_t, Action>> placed;
    for (std::size_t k = 0; k < 6; ++k)
      for (std::uint32_t m = 0; m < slots[r][k].size(); ++m)
        placed.push_back({slots[r][k][m], Action::make(kind_of[k], stage_of[k], m)});
    std::sort(placed.begin(), placed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [slot, action] : placed) programs[r].push_back(action);
  }
  return programs;
}

}  // namespace ppsched::vslot
