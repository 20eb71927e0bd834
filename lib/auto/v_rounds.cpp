// A V schedule built in rounds (v_rounds.hpp). Times here are the timed model's (an action starts
// when its rank is free and its inputs, plus their transfers, are there); they only decide the
// order: the greedy replays the order and measures it exactly.
#include "auto/v_rounds.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "sim/memory.hpp"

namespace ppsched::auto_detail {

namespace {

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

class Rounds {
 public:
  Rounds(const Shape& sh, double cap) : sh_(sh), cap_(cap), P_(sh.ranks), microbatches_(sh.microbatches) {
    f_end_.assign(std::size_t{sh.stages} * microbatches_, kUnknown);
    i_end_.assign(std::size_t{sh.stages} * microbatches_, kUnknown);
    ranks_.resize(P_);
    for (std::uint32_t r = 0; r < P_; ++r) ranks_[r].mem = sh.base[r];
  }

  bool failed() const { return failed_; }
  std::vector<std::vector<Action>> programs() {
    std::vector<std::vector<Action>> out;
    for (RankState& rs : ranks_) out.push_back(std::move(rs.program));
    return out;
  }

  // Chunk 0 is the rank's first stage (r), chunk 1 its second (2p-1-r).
  std::uint32_t stage(std::uint32_t r, int chunk) const { return chunk == 0 ? r : 2 * P_ - 1 - r; }
  std::uint32_t forwards(std::uint32_t r, int chunk) const { return ranks_[r].nf[chunk]; }
  std::uint32_t input_grads(std::uint32_t r, int chunk) const { return ranks_[r].ni[chunk]; }

  // When the input of rank r's next forward of `chunk` arrives (NaN: not placed yet).
  double forward_input(std::uint32_t r, int chunk) const {
    const std::uint32_t s = stage(r, chunk), m = ranks_[r].nf[chunk];
    if (m >= microbatches_) return kUnknown;
    return s == 0 ? 0.0 : f_end(s - 1, m) + sh_.fwd_xfer[s];
  }
  // When the input gradient from the next stage for rank r's next I of `chunk` arrives (NaN: not
  // placed yet); -inf when that I needs none (the last stage).
  double input_grad_input(std::uint32_t r, int chunk) const {
    const std::uint32_t s = stage(r, chunk), m = ranks_[r].ni[chunk];
    if (m >= microbatches_) return kUnknown;
    if (s + 1 == sh_.stages) return -std::numeric_limits<double>::infinity();
    return i_end(s + 1, m) + sh_.bwd_xfer[s];
  }

  void forward(std::uint32_t r, int chunk) {
    RankState& rs = ranks_[r];
    const std::uint32_t s = stage(r, chunk), m = rs.nf[chunk];
    const double ready = forward_input(r, chunk);
    if (m >= microbatches_ || std::isnan(ready) || !fits_under_cap(rs.mem + sh_.act[s], cap_)) return fail();
    rs.mem += sh_.act[s];
    f_end(s, m) = occupy(r, ready, sh_.f[s], Action::make(ActionKind::F, static_cast<std::uint16_t>(s), m));
    ++rs.nf[chunk];
  }
  void input_grad(std::uint32_t r, int chunk) {
    RankState& rs = ranks_[r];
    const std::uint32_t s = stage(r, chunk), m = rs.ni[chunk];
    const double from_next = input_grad_input(r, chunk);
    if (m >= rs.nf[chunk] || std::isnan(from_next)) return fail();
    rs.mem += memory_delta(ActionKind::I, sh_.act[s], sh_.wgt[s]).amount;
    i_end(s, m) = occupy(r, std::max(f_end(s, m), from_next), sh_.i[s],
                         Action::make(ActionKind::I, static_cast<std::uint16_t>(s), m));
    rs.pending_w.push_back({s, m});
    ++rs.ni[chunk];
  }
  bool weight_grad(std::uint32_t r) {
    RankState& rs = ranks_[r];
    if (rs.pending_w.empty()) return false;
    const auto [s, m] = rs.pending_w.front();
    rs.pending_w.pop_front();
    rs.mem += memory_delta(ActionKind::W, sh_.act[s], sh_.wgt[s]).amount;
    occupy(r, i_end(s, m), sh_.w[s], Action::make(ActionKind::W, static_cast<std::uint16_t>(s), m));
    return true;
  }

  // Before an action whose input arrives at `arrival`: W's while one fits in the wait, then one
  // more when the wait would take the rank's idle time past the most any rank has idled (when
  // `fill_beyond`).
  void fill_wait(std::uint32_t r, double arrival, bool fill_beyond) {
    RankState& rs = ranks_[r];
    if (std::isnan(arrival) || std::isinf(arrival)) return;
    while (!rs.pending_w.empty() && arrival >= rs.free + sh_.w[rs.pending_w.front().first]) weight_grad(r);
    if (fill_beyond && !rs.pending_w.empty() && arrival - rs.free > most_idle_ - rs.idle) weight_grad(r);
  }
  // W's until a forward of `s` fits; false when none is left.
  bool room_for_forward(std::uint32_t r, std::uint32_t s) {
    while (!fits_under_cap(ranks_[r].mem + sh_.act[s], cap_))
      if (!weight_grad(r)) return false;
    return true;
  }
  void drain(std::uint32_t r) {
    while (weight_grad(r)) {
    }
  }

  double act(std::uint32_t s) const { return sh_.act[s]; }
  double mem(std::uint32_t r) const { return ranks_[r].mem; }
  double free(std::uint32_t r) const { return ranks_[r].free; }
  double f_end(std::uint32_t s, std::uint32_t m) const { return f_end_[std::size_t{s} * microbatches_ + m]; }
  void fail() { failed_ = true; }

 private:
  struct RankState {
    double free = 0, mem = 0, idle = 0;
    bool started = false;
    std::uint32_t nf[2] = {0, 0}, ni[2] = {0, 0};
    std::deque<std::pair<std::uint32_t, std::uint32_t>> pending_w;  // (stage, microbatch), in I order
    std::vector<Action> program;
  };
  double& f_end(std::uint32_t s, std::uint32_t m) { return f_end_[std::size_t{s} * microbatches_ + m]; }
  double& i_end(std::uint32_t s, std::uint32_t m) { return i_end_[std::size_t{s} * microbatches_ + m]; }
  double i_end(std::uint32_t s, std::uint32_t m) const { return i_end_[std::size_t{s} * microbatches_ + m]; }
  double occupy(std::uint32_t r, double ready, double duration, Action a) {
    RankState& rs = ranks_[r];
    const double start = std::max(rs.free, ready);
    if (rs.started) {
      rs.idle += start - rs.free;
      most_idle_ = std::max(most_idle_, rs.idle);
    }
    rs.started = true;
    rs.free = start + duration;
    rs.program.push_back(a);
    return rs.free;
  }

  const Shape& sh_;
  const double cap_;
  const std::uint32_t P_, microbatches_;
  std::vector<double> f_end_, i_end_;  // [stage * microbatches + microbatch]
  std::vector<RankState> ranks_;
  double most_idle_ = 0;
  bool failed_ = false;
};

}  // namespace

std::optional<std::vector<std::vector<Action>>> v_rounds(const Shape& sh, double cap, bool fill_before_i,
                                                         bool fill_before_f) {
  if (sh.v != 2) return std::nullopt;
  const std::uint32_t P = sh.ranks, M = sh.microbatches;
  Rounds b(sh, cap);  // fits_under_cap reads a cap <= 0 as none
  // Warm-up, first the first microbatch's forward on every rank's first chunk. Then from the last
  // rank back: rank r (and the ranks before it, one each) takes more first-chunk forwards while
  // each ends before its second chunk's input can arrive and the rank keeps room for 1 + r more
  // microbatches; then its second chunk's first forward.
  for (std::uint32_t r = 0; r < P && !b.failed(); ++r) b.forward(r, 0);
  for (std::uint32_t r = P; r-- > 0 && !b.failed();) {
    if (r + 1 < P) {
      const double arrival = b.forward_input(r, 1);
      while (!b.failed() && b.forwards(r, 0) < M && b.free(r) + sh.f[r] <= arrival &&
             fits_under_cap(b.mem(r) + b.act(r) * (2 + 2.0 * r), cap))
        for (std::uint32_t j = 0; j <= r && !b.failed(); ++j) b.forward(j, 0);
    }
    if (!b.failed()) b.forward(r, 1);
  }
  // Then each rank, from the second on, takes forwards of both chunks in turn (and the ranks after
  // it with it) until it has run as many as the rank before it, and more second-chunk ones.
  int chunk = 0;
  const std::size_t limit = std::size_t{4} * M * P + 16;
  std::size_t steps = 0;
  for (std::uint32_t r = 1; r < P && !b.failed(); ++r)
    while (!b.failed() && (b.forwards(r, 0) + b.forwards(r, 1) < b.forwards(r - 1, 0) + b.forwards(r - 1, 1) ||
                           (b.forwards(r, 1) <= b.forwards(r - 1, 1) && b.forwards(r - 1, 1) < M))) {
      if (++steps > limit) return std::nullopt;
      for (std::uint32_t j = P; j-- > r && !b.failed();)
        if (b.forwards(j, chunk) < M) b.forward(j, chunk);
      chunk = 1 - chunk;
    }
  // Rounds: every rank one input gradient, then one forward.
  for (std::uint32_t round = 0; round < 2 * M && !b.failed(); ++round) {
    // The chunk of each rank's I: the first chunk's once the second's is ahead and its input is
    // known (always on the last rank, where it comes from the rank itself).
    std::vector<std::uint32_t> first_chunk, second_chunk;
    for (std::uint32_t r = 0; r < P; ++r) {
      const bool behind = b.input_grads(r, 0) < b.input_grads(r, 1);
      const bool known = r + 1 == P || !std::isnan(b.input_grad_input(r, 0)) || b.input_grads(r, 1) >= M;
      (behind && known ? first_chunk : second_chunk).push_back(r);
    }
    std::vector<std::pair<std::uint32_t, int>> order;
    for (auto it = first_chunk.rbegin(); it != first_chunk.rend(); ++it) order.push_back({*it, 0});
    for (std::uint32_t r : second_chunk) order.push_back({r, 1});
    for (const auto& [r, c] : order) {
      if (b.failed()) break;
      if (b.input_grads(r, c) >= M || b.input_grads(r, c) >= b.forwards(r, c)) continue;
      b.fill_wait(r, b.input_grad_input(r, c), c == 0 || fill_before_i);
      b.input_grad(r, c);
    }
    for (std::uint32_t r = 0; r < P && !b.failed(); ++r) {
      if (b.forwards(r, 1) >= M) continue;
      int c = -1;
      if (b.forwards(r, 1) >= b.forwards(r, 0))
        c = 0;
      else if (r + 1 == P || !std::isnan(b.forward_input(r, 1)))
        c = 1;
      else if (b.forwards(r, 0) < M && !std::isnan(b.forward_input(r, 0)))
        c = 0;
      if (c < 0 || b.forwards(r, c) >= M) continue;
      if (!b.room_for_forward(r, b.stage(r, c))) return std::nullopt;
      b.fill_wait(r, b.forward_input(r, c), fill_before_f);
      b.forward(r, c);
    }
  }
  for (std::uint32_t r = 0; r < P; ++r) b.drain(r);
  if (b.failed()) return std::nullopt;
  std::vector<std::vector<Action>> programs = b.programs();
  for (const auto& program : programs)
    if (program.size() != std::size_t{6} * M) return std::nullopt;  // some action was never placed
  return programs;
}

}  // namespace ppsched::auto_detail
