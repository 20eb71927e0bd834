// Interleaved zero bubble (ZB1P): the interleaved order with the backward split into I and W,
// W filling what would be bubbles. PyTorch then re-times the grid in lock step
// (_add_bubbles_to_actions): a rank idles while its next forward's input is not yet produced.
#include "synth/families.hpp"
#include "synth/interleaved_ops.hpp"

namespace ppsched::synth {

namespace {

// Lock-step re-timing. An F of stage s waits until the F of stage s-1 (same microbatch) ran in
// an earlier step. (PyTorch also delays a full backward B on its successor, but this schedule
// has no B.) An idle step is kept as idle.
std::vector<std::vector<Action>> add_bubbles(const std::vector<std::vector<Action>>& ranks, std::uint32_t num_stages,
                                             std::uint32_t microbatches) {
  const std::size_t R = ranks.size();
  constexpr std::int64_t kNotYet = -1;
  // Step at which F(stage, mb) and B(stage, mb) ran.
  std::vector<std::int64_t> f_step(std::size_t{num_stages} * microbatches, kNotYet);
  std::vector<std::int64_t> b_step(f_step);
  auto at = [&](std::uint32_t stage, std::uint32_t mb) { return std::size_t{stage} * microbatches + mb; };
  auto done_before = [&](const std::vector<std::int64_t>& steps, std::uint32_t stage, std::uint32_t mb,
                         std::int64_t step) {
    std::int64_t s = steps[at(stage, mb)];
    return s != kNotYet && s < step;
  };
  std::vector<std::vector<Action>> out(R);
  std::vector<std::size_t> next(R, 0);
  for (std::int64_t step = 0;; ++step) {
    bool any = false;
    for (std::size_t r = 0; r < R; ++r) {
      if (next[r] >= ranks[r].size()) continue;
      any = true;
      const Action& a = ranks[r][next[r]];
      if (a.is_idle()) {
        out[r].push_back(a);
        ++next[r];
        continue;
      }
      bool wait = false;
      if (a.kind == ActionKind::F) {
        wait = a.stage != 0 && !done_before(f_step, a.stage - 1u, a.microbatch(), step);
      } else if (a.kind == ActionKind::B) {
        wait = a.stage == num_stages - 1 ? !done_before(f_step, a.stage, a.microbatch(), step)
                                         : !done_before(b_step, a.stage + 1u, a.microbatch(), step);
      }
      if (wait) {
        out[r].push_back(Action::idle());
        continue;
      }
      out[r].push_back(a);
      if (a.kind == ActionKind::F) f_step[at(a.stage, a.microbatch())] = step;
      if (a.kind == ActionKind::B) b_step[at(a.stage, a.microbatch())] = step;
      ++next[r];
    }
    if (!any) break;
  }
  return out;
}

}  // namespace

Schedule interleaved_zero_bubble(const SynthParams& p) {
  InterleavedShape shape = interleaved_shape(p.ranks, p.microbatches, p.stages_per_rank, "Zero bubble");
  Schedule s = make_schedule(p, p.stages_per_rank, PlacementStyle::Loop);
  std::vector<std::vector<Action>> ranks(p.ranks);
  for (std::uint32_t r = 0; r < p.ranks; ++r) ranks[r] = interleaved_rank_ops(shape, r, true);
  auto timed = add_bubbles(ranks, s.num_stages, p.microbatches);
  for (std::uint32_t r = 0; r < p.ranks; ++r) s.ranks[r].actions = std::move(timed[r]);
  return s;
}

}  // namespace ppsched::synth
