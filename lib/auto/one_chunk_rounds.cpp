// One-chunk rounds (one_chunk_rounds.hpp). Times are the timed model's (an action starts when its
// rank is free and its input, plus its transfer, is there); they only decide the order, which
// the greedy then replays and measures exactly.
#include "auto/one_chunk_rounds.hpp"

#include <algorithm>

#include "sim/memory.hpp"

namespace ppsched::auto_detail {

namespace {

class Rounds {
 public:
  Rounds(const Shape& sh, double cap) : sh_(sh), cap_(cap), P_(sh.stages), M_(sh.microbatches) {
    stages_.resize(P_);
    for (std::uint32_t j = 0; j < P_; ++j) stages_[j].mem = sh.base[j];
    f_end_.assign(std::size_t{P_} * M_, 0.0);
    i_end_.assign(std::size_t{P_} * M_, 0.0);
  }

  bool failed() const { return failed_; }
  std::uint32_t forwards(std::uint32_t j) const { return stages_[j].nf; }
  std::uint32_t input_grads(std::uint32_t j) const { return stages_[j].ni; }
  std::uint32_t weight_grads(std::uint32_t j) const { return stages_[j].nw; }
  double end(std::uint32_t j) const { return stages_[j].end; }
  double mem(std::uint32_t j) const { return stages_[j].mem; }
  double idle(std::uint32_t j) const { return stages_[j].idle; }
  double most_idle() const { return most_idle_; }
  // When the input of stage j's forward / input gradient of microbatch m arrives (0 before the
  // sender has run it, as the rounds read it; a run that goes on from there fails in `forward`).
  double forward_input(std::uint32_t j, std::uint32_t m) const {
    return j == 0 ? 0.0 : f_end(j - 1, m) + sh_.fwd_xfer[j];
  }
  double input_grad_input(std::uint32_t j, std::uint32_t m) const {
    return j + 1 == P_ ? 0.0 : i_end_[std::size_t{j + 1} * M_ + m] + sh_.bwd_xfer[j];
  }
  double f_end(std::uint32_t j, std::uint32_t m) const { return f_end_[std::size_t{j} * M_ + m]; }

  void forward(std::uint32_t j) {
    Stage& st = stages_[j];
    const std::uint32_t m = st.nf;
    if (m >= M_ || (j > 0 && stages_[j - 1].nf <= m)) return fail();
    f_end_[std::size_t{j} * M_ + m] = occupy(j, forward_input(j, m), sh_.f[j]);
    st.mem += sh_.act[j];
    st.program.push_back(Action::make(ActionKind::F, static_cast<std::uint16_t>(j), m));
    ++st.nf;
  }
  void input_grad(std::uint32_t j) {
    Stage& st = stages_[j];
    const std::uint32_t m = st.ni;
    if (m >= st.nf || (j + 1 < P_ && stages_[j + 1].ni <= m)) return fail();
    i_end_[std::size_t{j} * M_ + m] = occupy(j, input_grad_input(j, m), sh_.i[j]);
    st.mem += memory_delta(ActionKind::I, sh_.act[j], sh_.wgt[j]).amount;
    st.program.push_back(Action::make(ActionKind::I, static_cast<std::uint16_t>(j), m));
    ++st.ni;
  }
  void weight_grad(std::uint32_t j) {
    Stage& st = stages_[j];
    if (st.nw >= st.ni) return fail();
    occupy(j, 0.0, sh_.w[j]);
    st.mem += memory_delta(ActionKind::W, sh_.act[j], sh_.wgt[j]).amount;
    st.program.push_back(Action::make(ActionKind::W, static_cast<std::uint16_t>(j), st.nw));
    ++st.nw;
  }
  // W's until an action adding `amount` fits; false when none is left to run.
  bool room_for(std::uint32_t j, double amount) {
    while (!fits_under_cap(stages_[j].mem + amount, cap_)) {
      if (stages_[j].nw >= stages_[j].ni) return false;
      weight_grad(j);
    }
    return true;
  }
  // Before an action whose input arrives at `arrival`: W's while one ends by then, then one more
  // while the stage would still wait, unless the wait is within its share of idle time and short
  // waits are left idle.
  void fill_wait(std::uint32_t j, double arrival, bool fill_short) {
    Stage& st = stages_[j];
    while (st.nw < st.ni && st.end + sh_.w[j] <= arrival) weight_grad(j);
    if (st.nw < st.ni && st.end < arrival && (fill_short || arrival - st.end > most_idle_ - st.idle)) weight_grad(j);
  }
  std::vector<std::vector<Action>> programs() {
    std::vector<std::vector<Action>> out;
    for (Stage& st : stages_) out.push_back(std::move(st.program));
    return out;
  }

 private:
  struct Stage {
    double end = 0, mem = 0, idle = 0;
    std::uint32_t nf = 0, ni = 0, nw = 0;
    std::vector<Action> program;
  };
  // Runs an action of `duration` once the stage is free and its input is there; the wait counts
  // as idle time once the stage has run a forward.
  double occupy(std::uint32_t j, double ready, double duration) {
    Stage& st = stages_[j];
    const double done = std::max(st.end, ready) + duration;
    if (st.nf > 0) {
      st.idle += done - (st.end + duration);
      most_idle_ = std::max(most_idle_, st.idle);
    }
    st.end = done;
    return done;
  }
  void fail() { failed_ = true; }

  const Shape& sh_;
  const double cap_;
  const std::uint32_t P_, M_;
  std::vector<Stage> stages_;
  std::vector<double> f_end_, i_end_;  // [stage * microbatches + microbatch]
  double most_idle_ = 0;
  bool failed_ = false;
};

}  // namespace

std::optional<std::vector<std::vector<Action>>> one_chunk_rounds(const Shape& sh, double cap, OneChunkRules rules) {
  if (sh.v != 1 || sh.stages == 0 || sh.microbatches == 0) return std::nullopt;
  const std::uint32_t P = sh.stages, M = sh.microbatches;
  Rounds r(sh, cap);
  // Microbatch 0 and the warm-up. `ready` follows microbatch 0's input gradient back from the last
  // stage as each stage would run it after its extra forwards.
  for (std::uint32_t j = 0; j < P; ++j) r.forward(j);
  std::vector<std::uint32_t> extra(P, 0);
  double ready = r.f_end(P - 1, 0) + sh.i[P - 1];
  for (std::uint32_t j = P - 1; j-- > 0;) {
    double mem = r.mem(j), end = r.end(j);
    const double arrival = ready + sh.bwd_xfer[j];
    while (r.forwards(j) + extra[j] < M && fits_under_cap(mem + sh.act[j], cap)) {
      if (rules.idle_before_first_input_grad ? end + sh.f[j] > arrival : end >= arrival) break;
      mem += sh.act[j];
      end += sh.f[j];
      ++extra[j];
    }
    ready = std::max(end, arrival) + sh.i[j];
  }
  // Each stage fewer extra forwards than the one before (unless it would run out of microbatches).
  for (std::uint32_t j = 1; j < P; ++j)
    while (extra[j] > 0 && extra[j] >= extra[j - 1] && r.forwards(j) + extra[j] < M) --extra[j];
  for (std::uint32_t j = 0; j < P; ++j)
    for (std::uint32_t k = 0; k < extra[j]; ++k) r.forward(j);
  for (std::uint32_t j = P; j-- > 0;) r.input_grad(j);

  for (std::uint32_t round = 1; round < M && !r.failed(); ++round) {
    std::vector<char> takes(P, 0);
    for (std::uint32_t j = 0; j < P; ++j) {
      if (r.forwards(j) >= M) continue;
      if (rules.hold_forwards_for_input_grads && j + 1 < P && r.forwards(j) >= r.forwards(j + 1) + 2) {
        // When the next stage's forward and input gradient come back here.
        const double back = r.end(j + 1) + sh.f[j + 1] + sh.i[j + 1] + sh.bwd_xfer[j];
        if (r.end(j) >= back) continue;
        double mem = r.mem(j) + sh.act[j], w_time = 0;
        for (std::uint32_t k = r.weight_grads(j); !fits_under_cap(mem, cap) && k < r.input_grads(j); ++k) {
          w_time += sh.w[j];
          mem += memory_delta(ActionKind::W, sh.act[j], sh.wgt[j]).amount;
        }
        if (r.end(j) + sh.f[j] + w_time <= back) {
          takes[j] = 1;
          continue;
        }
        if (back - r.end(j) <= r.most_idle() - r.idle(j)) continue;
      }
      takes[j] = 1;
    }
    for (std::uint32_t j = P - 1; j-- > 0;) takes[j] = std::min(takes[j], takes[j + 1]);
    for (std::uint32_t j = 0; j < P && !r.failed(); ++j) {
      if (!takes[j]) continue;
      if (!r.room_for(j, sh.act[j])) return std::nullopt;
      if (j > 0) r.fill_wait(j, r.forward_input(j, r.forwards(j)), rules.fill_short_waits);
      r.forward(j);
    }
    for (std::uint32_t j = P; j-- > 0 && !r.failed();) {
      if (r.input_grads(j) != round) return std::nullopt;
      if (!r.room_for(j, memory_delta(ActionKind::I, sh.act[j], sh.wgt[j]).amount)) return std::nullopt;
      if (j + 1 < P) r.fill_wait(j, r.input_grad_input(j, round), rules.fill_short_waits);
      if (j == 0 && r.forwards(0) == M)
        while (r.weight_grads(0) < r.input_grads(0)) r.weight_grad(0);
      r.input_grad(j);
    }
  }
  for (std::uint32_t j = 0; j < P && !r.failed(); ++j)
    while (!r.failed() && r.weight_grads(j) < M) r.weight_grad(j);
  if (r.failed()) return std::nullopt;
  return r.programs();
}

}  // namespace ppsched::auto_detail
