// The controllable-memory framework over one V building block (v_block.hpp). Everything is in
// unit slots: a Grid holds, per rank, the action kind at each slot (or a blank); microbatches are
// implicit, the j-th cell of a kind on a rank being microbatch j of it, except the weight
// gradients, which are given to the input gradients in the order these ran (at the end).
#include "synth/v_block.hpp"

#include <algorithm>
#include <deque>

namespace ppsched::vblock {

namespace {

constexpr std::int8_t kBlank = -1;
using Grid = std::vector<std::vector<std::int8_t>>;

bool is_forward(int k) { return k == kF0 || k == kF1; }
bool is_weight(int k) { return k == kW1 || k == kW0; }
// Forwards of chunk 0 and input gradients of chunk 1 flow down the ranks, the other two up.
bool flows_down(int k) { return k == kF0 || k == kI1; }
// What a rank's own earlier action of the same microbatch an action needs, where it has no
// neighbour to wait for: the loss (first rank, chunk 1's input gradient after its forward), the
// turn of the V (last rank), and a weight gradient after its input gradient.
int own_parent(int k) {
  switch (k) {
    case kF1:
      return kF0;
    case kI1:
      return kF1;
    case kI0:
      return kI1;
    case kW1:
      return kI1;
    case kW0:
      return kI0;
    default:
      return -1;
  }
}

}  // namespace

// ---- building blocks ----

// The weight gradients take the first free slots after their input gradients (the second chunk's
// first), so that a rank's six slots are all used.
bool fill_weight_grads(Row& row) {
  std::array<bool, kPeriod> used{};
  for (int k : {kF0, kF1, kI1, kI0}) used[row[k]] = true;
  for (auto [ig, wg] : {std::pair{kI1, kW1}, std::pair{kI0, kW0}}) {
    int j = 1;
    while (j < kPeriod && used[(row[ig] + j) % kPeriod]) ++j;
    if (j == kPeriod) return false;
    row[wg] = (row[ig] + j) % kPeriod;
    used[row[wg]] = true;
  }
  return true;
}

// The next rank's row: its chunk-0 forward and chunk-1 input gradient `shift` slots later than on
// this rank, the other two one slot earlier. False when two land on one slot.
bool next_row(const Row& row, int shift, Row& next) {
  std::array<bool, kPeriod> used{};
  const std::array<int, 4> moves{shift, -1, shift, -1};  // kF0, kF1, kI1, kI0
  for (int k = 0; k < 4; ++k) {
    next[k] = ((row[k] + moves[k]) % kPeriod + kPeriod) % kPeriod;
    if (used[next[k]]) return false;
    used[next[k]] = true;
  }
  return fill_weight_grads(next);
}

// Where each rank's first microbatch of each kind sits: microbatch 0's chain in order (chunk-0
// forwards down the ranks, chunk-1 forwards back up, chunk-1 input gradients down, chunk-0 back
// up), each at the first slot of its kind after the one it follows; a weight gradient at the
// first of its kind after its input gradient. Later microbatches sit a period later each.
std::vector<Firsts> first_positions(const std::vector<Row>& rows) {
  const auto P = static_cast<std::uint32_t>(rows.size());
  std::vector<Firsts> first(P);
  int at = 0;
  auto place = [&](std::uint32_t r, int k) {
    while (at % kPeriod != rows[r][k]) ++at;
    first[r][k] = at++;
  };
  auto weight = [&](std::uint32_t r, int ig, int wg) {
    int t = first[r][ig] + 1;
    while (t % kPeriod != rows[r][wg]) ++t;
    first[r][wg] = t;
  };
  for (std::uint32_t r = 0; r < P; ++r) place(r, kF0);
  for (std::uint32_t r = P; r-- > 0;) place(r, kF1);
  for (std::uint32_t r = 0; r < P; ++r) {
    place(r, kI1);
    weight(r, kI1, kW1);
  }
  for (std::uint32_t r = P; r-- > 0;) {
    place(r, kI0);
    weight(r, kI0, kW0);
  }
  return first;
}

// The most chunk activations some rank holds in the steady state of the block repeated `repeats`
// times (once both weight gradients have started): never more than the peak of the repeated
// block, so a block over the framework's limit is ruled out before its grid is built.
int steady_level(const std::vector<Firsts>& first, std::uint32_t repeats) {
  int most = 0;
  for (const auto& f : first) {
    const int from = std::max(f[kW0], f[kW1]);
    for (int t = from; t < from + kPeriod; ++t) {
      int level = 0;
      for (int k = 0; k < kPeriod; ++k) {
        if (t < f[k]) continue;
        const int n = std::min((t - f[k]) / kPeriod + 1, static_cast<int>(repeats));
        level += is_forward(k) ? n : is_weight(k) ? -n : 0;
      }
      most = std::max(most, level);
    }
  }
  return most;
}

namespace {

// ---- the framework, in slots ----

class Framework {
 public:
  Framework(std::uint32_t ranks, std::uint32_t microbatches, std::uint32_t chunks)
      : P_(ranks), microbatches_(microbatches), repeats_(repeats(ranks, microbatches)), chunks_(chunks) {}

  double work() const { return work_; }

  // The block repeated repeats_ times, squeezed, reordered; each rank's program, or nullopt when the
  // block does not fit or a step cannot keep it valid.
  std::optional<std::vector<std::vector<Action>>> run(const std::vector<Firsts>& first) {
    work_ = 0;
    int length = 0;
    for (const auto& f : first) length = std::max(length, *std::max_element(f.begin(), f.end()) + 1);
    length += kPeriod * static_cast<int>(repeats_);
    Grid g(P_, std::vector<std::int8_t>(static_cast<std::size_t>(length), kBlank));
    work_ += static_cast<double>(length) * P_;
    for (std::uint32_t r = 0; r < P_; ++r)
      for (int k = 0; k < kPeriod; ++k)
        for (std::uint32_t j = 0; j < repeats_; ++j)
          g[r][static_cast<std::size_t>(first[r][k]) + kPeriod * j] = static_cast<std::int8_t>(k);
    const int initial_peak = peak(g);
    if (initial_peak > most_held(P_, microbatches_, chunks_)) return std::nullopt;
    if (!squeeze(g, repeats_) || !warm_up(g) || !squeeze(g, repeats_) || peak(g) > initial_peak) return std::nullopt;
    int limit = initial_peak;
    if (microbatches_ < repeats_) {
      drop_extra_microbatches(g);
      if (microbatches_ <= P_ && 2 * microbatches_ <= chunks_) release_early_weights(g);
      if (!squeeze(g, microbatches_)) return std::nullopt;
      limit = peak(g);
      if (limit > static_cast<int>(chunks_)) return std::nullopt;
    }
    if (!cool_down(g) || !squeeze(g, microbatches_)) return std::nullopt;
    fill_holes(g);
    if (peak(g) > limit) return std::nullopt;
    return programs(g);
  }

 private:
  // The most chunk activations any rank holds (a forward adds one, a weight gradient frees it).
  static std::vector<int> peaks(const Grid& g) {
    std::vector<int> out;
    for (const auto& row : g) {
      int level = 0, top = 0;
      for (std::int8_t k : row) {
        level += is_forward(k) ? 1 : is_weight(k) ? -1 : 0;
        top = std::max(top, level);
      }
      out.push_back(top);
    }
    return out;
  }
  static int peak(const Grid& g) {
    const auto all = peaks(g);
    return all.empty() ? 0 : *std::max_element(all.begin(), all.end());
  }

  std::size_t at(std::uint32_t mb, std::uint32_t r, int k) const {
    return (std::size_t{mb} * P_ + r) * kPeriod + static_cast<std::size_t>(k);
  }

  // What rank r's next action of kind k (its count[k]-th) waits for, besides its rank's order:
  // kOwn when nothing else (a W, or an action at the edge of the V whose own earlier action of the
  // microbatch already ran), kNever when that own action has not run (it can only come later in
  // the order), kNotYet when its neighbour's same action is not placed yet, else that one's slot.
  static constexpr int kOwn = -1, kNever = -2, kNotYet = -3;
  int waits_for(std::uint32_t r, int k, const std::array<std::uint32_t, kPeriod>& count) const {
    const std::uint32_t mb = count[k];
    const bool edge = flows_down(k) ? r == 0 : r + 1 == P_;
    if (is_weight(k) || edge) {
      const int parent = own_parent(k);
      return parent >= 0 && count[parent] <= mb ? kNever : kOwn;
    }
    const int dep = placed_[at(mb, flows_down(k) ? r - 1 : r + 1, k)];
    return dep < 0 ? kNotYet : dep;
  }

  // Each action as early as its rank's order and its neighbour's same action allow, the order on
  // every rank kept: a slot one past the later of the two. The ranks are swept in turn, each as far
  // as its neighbours' actions are placed (a slot depends on nothing else, so the order of the
  // sweeps does not matter). False when an action comes before what it needs on its own rank, or
  // the ranks wait on each other.
  bool squeeze(Grid& g, std::uint32_t microbatches) {
    std::vector<std::vector<std::int8_t>> order(P_);
    for (std::uint32_t r = 0; r < P_; ++r) {
      work_ += static_cast<double>(g[r].size());
      for (std::int8_t k : g[r])
        if (k != kBlank) order[r].push_back(k);
    }
    placed_.assign(std::size_t{microbatches} * P_ * kPeriod, -1);
    std::vector<std::array<std::uint32_t, kPeriod>> count(P_, std::array<std::uint32_t, kPeriod>{});
    std::vector<int> next(P_, 0);
    std::vector<std::size_t> done(P_, 0);
    std::vector<std::vector<int>> slots(P_);
    for (bool moved = true; moved;) {
      moved = false;
      for (std::uint32_t r = 0; r < P_; ++r) {
        for (; done[r] < order[r].size(); ++done[r]) {
          const std::int8_t k = order[r][done[r]];
          const std::uint32_t mb = count[r][k];
          if (mb >= microbatches) return false;
          const int dep = waits_for(r, k, count[r]);
          if (dep == kNever) return false;
          if (dep == kNotYet) break;  // its neighbour has not got there yet
          const int slot = dep == kOwn ? next[r] : std::max(next[r], dep + 1);
          placed_[at(mb, r, k)] = slot;
          slots[r].push_back(slot);
          ++count[r][k];
          next[r] = slot + 1;
          moved = true;
        }
      }
    }
    for (std::uint32_t r = 0; r < P_; ++r)
      if (done[r] < order[r].size()) return false;
    const int used = *std::max_element(next.begin(), next.end());
    for (std::uint32_t r = 0; r < P_; ++r) {
      g[r].assign(static_cast<std::size_t>(used), kBlank);
      for (std::size_t n = 0; n < order[r].size(); ++n) g[r][static_cast<std::size_t>(slots[r][n])] = order[r][n];
    }
    return true;
  }

  // The warm-up (what a rank runs before its first chunk-0 input gradient) laid out anew with the
  // same actions: first forwards up to the memory the schedule uses (on rank r, chunk-0 forwards
  // over the 2(p-1-r) slots before chunk 1 can reach it, then both chunks in turn, chunk 1 at most
  // r+1 and half the memory), then the rest in threes: a chunk-1 input gradient, a weight
  // gradient, a forward.
  bool warm_up(Grid& g) {
    const int top = std::min(peak(g), static_cast<int>(2 * P_));
    for (std::uint32_t r = 0; r < P_; ++r) {
      auto& row = g[r];
      const auto first_i0 = std::find(row.begin(), row.end(), static_cast<std::int8_t>(kI0));
      if (first_i0 == row.end()) return false;
      std::array<std::uint32_t, kPeriod> have{};
      for (auto it = row.begin(); it != first_i0; ++it)
        if (*it != kBlank) ++have[*it];
      std::fill(row.begin(), first_i0, kBlank);
      const std::uint32_t want_f1 = std::min({r + 1, static_cast<std::uint32_t>(top / 2), repeats_});
      const std::uint32_t want_f0 = std::min(static_cast<std::uint32_t>(top) - want_f1, repeats_);
      std::array<std::uint32_t, kPeriod> put{};
      std::size_t j = r;
      auto place = [&](int k) {
        if (j >= row.size() || row[j] != kBlank) return false;  // past the warm-up, only into holes
        row[j] = static_cast<std::int8_t>(k);
        ++put[k];
        return true;
      };
      auto take_f0 = [&] { return put[kF0] < want_f0 && put[kF0] < have[kF0]; };
      for (std::uint32_t n = 0; n < 2 * (P_ - 1 - r); ++n, ++j)
        if (take_f0() && !place(kF0)) return false;
      for (std::uint32_t n = 0; n <= r; ++n) {
        if (take_f0() && !place(kF0)) return false;
        ++j;
        if (put[kF1] < want_f1 && put[kF1] < have[kF1] && !place(kF1)) return false;
        ++j;
      }
      while (put[kF0] < have[kF0] || put[kF1] < have[kF1] || put[kI1] < have[kI1] || put[kW1] < have[kW1]) {
        if (put[kI1] < have[kI1] && !place(kI1)) return false;
        ++j;
        if (put[kW1] < have[kW1] && !place(kW1)) return false;
        ++j;
        if (put[kF1] < have[kF1]) {
          if (put[kF1] >= put[kF0] && r + 1 == P_) return false;  // the turn of the V needs its chunk-0 forward
          if (!place(kF1)) return false;
        } else if (put[kF0] < have[kF0] && !place(kF0)) {
          return false;
        }
        ++j;
      }
      if (have[kW0] != 0 || have[kI0] != 0) return false;
    }
    return true;
  }

  // Keeps the first microbatches_ of every kind on every rank (the block was repeated repeats_ >= 2p
  // times, so that its warm-up had enough to reorder).
  void drop_extra_microbatches(Grid& g) const {
    for (auto& row : g) {
      std::array<std::uint32_t, kPeriod> seen{};
      for (auto& k : row)
        if (k != kBlank && seen[k]++ >= microbatches_) k = kBlank;
    }
  }

  // Few microbatches: a rank whose memory stays below the schedule's top moves its first weight
  // gradients to its end (they free memory it does not need), so its input gradients go sooner.
  void release_early_weights(Grid& g) const {
    const auto all = peaks(g);
    const int top = std::min(*std::max_element(all.begin(), all.end()), static_cast<int>(2 * P_));
    const int least = *std::min_element(all.begin(), all.end());
    for (std::uint32_t r = 0; r < P_; ++r) {
      std::vector<std::int8_t> moved(static_cast<std::size_t>(std::max(0, top - least)), kBlank);
      int n = 0;
      for (auto& k : g[r]) {
        if (all[r] + n >= top) break;
        if (is_weight(k)) {
          moved[static_cast<std::size_t>(n++)] = k;
          k = kBlank;
        }
      }
      g[r].insert(g[r].end(), moved.begin(), moved.end());
    }
  }

  // The cool-down (after the last chunk-1 forward): the last input gradients of each chunk (chunk
  // 0's: half the memory; chunk 1's: r+1 on rank r, within the rest) laid out as tight as their
  // chains allow, a slot apart, and the weight gradients that were among them moved into the
  // holes after the rank's last remaining one, or to its end.
  bool cool_down(Grid& g) const {
    const int top = peak(g);
    const std::uint32_t want_i0 = std::min(static_cast<std::uint32_t>((top + 1) / 2), microbatches_);
    const std::uint32_t want_i1 =
        std::min(static_cast<std::uint32_t>(top) - std::min(static_cast<std::uint32_t>(top), want_i0), microbatches_);
    long start = -1;
    for (std::uint32_t r = 0; r < P_; ++r) {
      auto& row = g[r];
      std::uint32_t i1 = 0, i0 = 0, w1 = 0, w0 = 0;
      long last_f1 = -1;
      for (std::size_t n = row.size(); n-- > 0;) {
        std::int8_t& k = row[n];
        if (k == kF1 && last_f1 < 0) last_f1 = static_cast<long>(n);
        if (k == kI1 && i1 < r + 1 && i1 < want_i1) {
          k = kBlank;
          ++i1;
        }
        if (k == kI0 && i0 < want_i0) {
          k = kBlank;
          ++i0;
        }
      }
      for (std::size_t n = row.size(); n-- > 0;) {
        if (w1 >= i1 && w0 >= i0 && static_cast<int>(w1 + w0) >= top) break;
        std::int8_t& k = row[n];
        if (k == kW1) {
          k = kBlank;
          ++w1;
        } else if (k == kW0) {
          k = kBlank;
          ++w0;
        }
      }
      if (r == 0) start = last_f1;
      if (start < 0) return false;
      for (std::uint32_t n = 0; n < i0; ++n) {
        const long slot = start - static_cast<long>(r) + 2L * P_ - 2L * n;
        if (slot < 0 || slot >= static_cast<long>(row.size()) || row[static_cast<std::size_t>(slot)] != kBlank)
          return false;
        row[static_cast<std::size_t>(slot)] = kI0;
      }
      for (std::uint32_t n = 0; n < i1; ++n) {
        const long slot = start + 1 + static_cast<long>(r) - 2L * n;
        if (slot < 0 || slot >= static_cast<long>(row.size())) return false;
        row[static_cast<std::size_t>(slot)] = kI1;
      }
    }
    // The weight gradients back: into the holes after each rank's last one, oldest input gradient's
    // chunk first, the rest at the end.
    std::size_t length = 0;
    for (auto& row : g) {
      long last_w = -1;
      for (std::size_t n = row.size(); n-- > 0;)
        if (is_weight(row[n])) {
          last_w = static_cast<long>(n);
          break;
        }
      int owed1 = 0, owed0 = 0;
      for (std::size_t n = 0; n < row.size(); ++n) {
        std::int8_t& k = row[n];
        owed1 += k == kI1 ? 1 : k == kW1 ? -1 : 0;
        owed0 += k == kI0 ? 1 : k == kW0 ? -1 : 0;
        if (k == kBlank && static_cast<long>(n) > last_w) {
          if (owed1 > 0) {
            k = kW1;
            --owed1;
          } else if (owed0 > 0) {
            k = kW0;
            --owed0;
          }
        }
      }
      row.insert(row.end(), static_cast<std::size_t>(std::max(0, owed1)), kW1);
      row.insert(row.end(), static_cast<std::size_t>(std::max(0, owed0)), kW0);
      length = std::max(length, row.size());
    }
    for (auto& row : g) row.resize(length, kBlank);
    return true;
  }

  // Every hole, left to right, takes the first later action of the rank that could run there
  // without moving anything else: what it needs already ran in an earlier slot, and a forward
  // does not raise the rank's memory past the schedule's top. Only the next action of each kind
  // is a candidate (they keep their order within a kind).
  void fill_holes(Grid& g) {
    const int top = peak(g);
    const std::size_t length = g.empty() ? 0 : g[0].size();
    work_ += static_cast<double>(length) * P_;
    std::vector<std::array<long, kPeriod>> last(P_);
    for (std::uint32_t r = 0; r < P_; ++r) {
      last[r].fill(-1);
      for (std::size_t n = 0; n < length; ++n)
        if (g[r][n] != kBlank) last[r][g[r][n]] = static_cast<long>(n);
    }
    placed_.assign(std::size_t{microbatches_} * P_ * kPeriod, -1);
    std::vector<std::array<std::uint32_t, kPeriod>> count(P_, std::array<std::uint32_t, kPeriod>{});
    std::vector<int> level(P_, 0);
    auto record = [&](std::uint32_t r, std::int8_t k, std::size_t slot) {
      const std::uint32_t mb = count[r][k]++;
      if (mb < microbatches_) placed_[at(mb, r, k)] = static_cast<int>(slot);
      level[r] += is_forward(k) ? 1 : is_weight(k) ? -1 : 0;
    };
    for (std::size_t j = 0; j < length; ++j)
      for (std::uint32_t r = 0; r < P_; ++r) {
        auto& row = g[r];
        if (row[j] != kBlank) {
          record(r, row[j], j);
          continue;
        }
        std::array<bool, kPeriod> open{};
        int left = 0;
        for (int k = 0; k < kPeriod; ++k) left += (open[k] = last[r][k] > static_cast<long>(j)) ? 1 : 0;
        int delta = 0, rise = 0;
        for (std::size_t n = j + 1; n < length && left > 0; ++n) {
          const std::int8_t k = row[n];
          delta += is_forward(k) ? 1 : is_weight(k) ? -1 : 0;
          const int rise_before = rise;
          rise = std::max(rise, delta);
          if (k == kBlank || !open[k]) continue;
          open[k] = false;
          --left;
          if (is_forward(k) && level[r] + rise_before >= top) continue;
          if (!can_run(r, k, count[r], static_cast<int>(j))) continue;
          row[j] = k;
          row[n] = kBlank;
          record(r, k, j);
          break;
        }
      }
  }
  bool can_run(std::uint32_t r, int k, const std::array<std::uint32_t, kPeriod>& count, int slot) const {
    if (count[k] >= microbatches_) return false;
    const int dep = waits_for(r, k, count);
    return dep == kOwn || (dep >= 0 && dep < slot);
  }

  // The programs: slots in order, the j-th of a kind being microbatch j, each weight gradient
  // given to the oldest input gradient still without one.
  std::optional<std::vector<std::vector<Action>>> programs(const Grid& g) const {
    std::vector<std::vector<Action>> out(P_);
    for (std::uint32_t r = 0; r < P_; ++r) {
      const auto first = static_cast<std::uint16_t>(r), second = static_cast<std::uint16_t>(2 * P_ - 1 - r);
      std::array<std::uint32_t, kPeriod> count{};
      std::deque<Action> owed;
      for (std::int8_t k : g[r]) {
        if (k == kBlank) continue;
        if (is_weight(k)) {
          if (owed.empty()) return std::nullopt;
          out[r].push_back(Action::make(ActionKind::W, owed.front().stage, owed.front().index));
          owed.pop_front();
          continue;
        }
        const std::uint32_t mb = count[k]++;
        if (mb >= microbatches_) return std::nullopt;
        const std::uint16_t stage = k == kF0 || k == kI0 ? first : second;
        const ActionKind kind = is_forward(k) ? ActionKind::F : ActionKind::I;
        out[r].push_back(Action::make(kind, stage, mb));
        if (kind == ActionKind::I) owed.push_back(out[r].back());
      }
      if (!owed.empty() || out[r].size() != std::size_t{6} * microbatches_) return std::nullopt;
    }
    return out;
  }

  const std::uint32_t P_, microbatches_, repeats_, chunks_;
  double work_ = 0;          // cells passed over by the last run's squeezes and hole filling
  std::vector<int> placed_;  // slot of (microbatch, rank, kind), as squeeze or fill_holes placed it
};

}  // namespace

std::uint32_t repeats(std::uint32_t ranks, std::uint32_t microbatches) { return std::max(microbatches, 2 * ranks); }

int most_held(std::uint32_t ranks, std::uint32_t microbatches, std::uint32_t chunks) {
  return static_cast<int>(repeats(ranks, microbatches) == microbatches ? std::min(chunks, 2 * ranks) : 2 * ranks);
}

std::optional<std::vector<std::vector<Action>>> reorder(const std::vector<Firsts>& first, std::uint32_t microbatches,
                                                        std::uint32_t chunks, double& work) {
  Framework framework(static_cast<std::uint32_t>(first.size()), microbatches,
                      std::min(chunks, 2 * static_cast<std::uint32_t>(first.size())));
  auto out = framework.run(first);
  work += framework.work();
  return out;
}

}  // namespace ppsched::vblock
