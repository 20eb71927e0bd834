// DualPipeV: DeepSeek's DualPipe folded into a V (two chunks per rank). In its main phase a
// rank overlaps the forward of one chunk with the backward of the other, as one
// (F;B)OVERLAP_F_B container; some late backwards are split into I and W (zero bubble), the Ws
// running later in first-in first-out order. Microbatch numbers are counted per (stage, kind);
// a full backward advances both the I and the W counters of its stage.
#include <deque>
#include <map>
#include <utility>

#include "synth/families.hpp"

namespace ppsched::synth {

namespace {

class RankBuilder {
 public:
  RankBuilder(Schedule& s, std::vector<Action>& ops) : s_(s), ops_(ops) {}

  void forward(std::uint32_t stage) { ops_.push_back(F(stage, next(stage, ActionKind::F)++)); }

  void full_backward(std::uint32_t stage) {
    ops_.push_back(B(stage, count(stage, ActionKind::I)));
    bump_backward(stage);
  }

  void input_backward(std::uint32_t stage) {
    std::uint32_t mb = next(stage, ActionKind::I)++;
    ops_.push_back(I(stage, mb));
    weights_.emplace_back(stage, mb);
  }

  void backward(std::uint32_t stage, bool zero_bubble) { zero_bubble ? input_backward(stage) : full_backward(stage); }

  void overlap(std::uint32_t forward_stage, std::uint32_t backward_stage) {
    Action subs[] = {F(forward_stage, count(forward_stage, ActionKind::F)),
                     B(backward_stage, count(backward_stage, ActionKind::I))};
    ops_.push_back(Action::container(ActionKind::OverlapFB, s_.sub_actions.add(subs)));
    ++next(forward_stage, ActionKind::F);
    bump_backward(backward_stage);
  }

  void pending_weight() {
    if (weights_.empty()) return;
    auto [stage, mb] = weights_.front();
    weights_.pop_front();
    ops_.push_back(W(stage, mb));
    ++next(stage, ActionKind::W);
  }

 private:
  std::uint32_t& next(std::uint32_t stage, ActionKind kind) { return counters_[{stage, kind}]; }
  std::uint32_t count(std::uint32_t stage, ActionKind kind) { return counters_[{stage, kind}]; }
  void bump_backward(std::uint32_t stage) {
    ++next(stage, ActionKind::I);
    ++next(stage, ActionKind::W);
  }

  Schedule& s_;
  std::vector<Action>& ops_;
  std::map<std::pair<std::uint32_t, ActionKind>, std::uint32_t> counters_;
  std::deque<std::pair<std::uint32_t, std::uint32_t>> weights_;
};

}  // namespace

Schedule dualpipev(const SynthParams& p) {
  const std::uint32_t R = p.ranks, M = p.microbatches;
  if (M < 2 * R)
    throw SynthError("DualPipeV requires at least as many microbatches as stages, but got " + std::to_string(M) +
                     " microbatches and " + std::to_string(2 * R) + " stages.");
  Schedule s = make_schedule(p, 2, PlacementStyle::V);
  for (std::uint32_t r = 0; r < R; ++r) {
    RankBuilder b(s, s.ranks[r].actions);
    const std::uint32_t s0 = r, s1 = 2 * R - 1 - r;
    for (std::uint32_t i = 0; i < (R - r - 1) * 2; ++i) b.forward(s0);  // 1: F0
    for (std::uint32_t i = 0; i < r + 1; ++i) {                         // 2: F0 F1
      b.forward(s0);
      b.forward(s1);
    }
    for (std::uint32_t i = 0; i < R - r - 1; ++i) {  // 3: I1 W F1
      b.input_backward(s1);
      b.pending_weight();
      b.forward(s1);
    }
    for (std::uint32_t i = 0; i < M - 2 * R + r + 1; ++i) {  // 4: (F0;B1) (F1;B0)
      if (i == 0 && r == R - 1) {
        b.forward(s0);  // the last rank does not overlap its first pair
        b.full_backward(s1);
      } else {
        b.overlap(s0, s1);
      }
      b.overlap(s1, s0);
    }
    for (std::uint32_t i = 0; i < R - r - 1; ++i) {  // 5: B1 (F1;B0)
      b.full_backward(s1);
      b.overlap(s1, s0);
    }
    bool zero_bubble = false;  // 6: B1 B0, the second half split into I and W
    const std::uint32_t step6 = r + 1;
    for (std::uint32_t i = 0; i < step6; ++i) {
      if (i == step6 / 2 && r % 2 == 1) zero_bubble = true;
      b.backward(s1, zero_bubble);
      if (i == step6 / 2 && r % 2 == 0) zero_bubble = true;
      b.backward(s0, zero_bubble);
    }
    for (std::uint32_t i = 0; i < R - r - 1; ++i) {  // 7: W B0
      b.pending_weight();
      b.backward(s0, zero_bubble);
    }
    for (std::uint32_t i = 0; i < r + 1; ++i) b.pending_weight();  // 8: W
  }
  return s;
}

}  // namespace ppsched::synth
