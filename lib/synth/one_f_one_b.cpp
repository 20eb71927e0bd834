// 1F1B. By default, the order PyTorch's single-stage runtime executes (_step_microbatches):
// min(m, p-r) warm-up forwards, then alternate backward and forward, then the last backwards.
//
// PyTorch's Schedule1F1B.pipeline_order at the corpus commit is not that order and is invalid:
// its first steady-state forward is "last warm-up index + 1" counted from 0 even when a rank has
// no warm-up, so the last rank runs F1..Fm (no F0, one microbatch out of range). With
// pytorch_compat it is reproduced byte for byte, REDUCE_GRAD included, for comparison.
#include "passes/passes.hpp"
#include "synth/families.hpp"

namespace ppsched::synth {

namespace {

void check(const SynthParams& p) {
  if (p.microbatches < p.ranks)
    throw SynthError("Number of microbatches (" + std::to_string(p.microbatches) +
                     ") must be greater than or equal to the number of stages (" + std::to_string(p.ranks) + ").");
}

Schedule runtime_order(const SynthParams& p) {
  Schedule s = make_schedule(p, 1, PlacementStyle::Loop);
  for (std::uint32_t r = 0; r < p.ranks; ++r) {
    auto& ops = s.ranks[r].actions;
    ops.reserve(2 * std::size_t{p.microbatches});  // its exact size: grown by doubling, it touched twice the memory
    std::uint32_t f = 0, b = 0;
    std::uint32_t warmup = std::min(p.microbatches, p.ranks - r);
    while (f < warmup) ops.push_back(F(r, f++));
    while (b < p.microbatches) {
      ops.push_back(B(r, b++));
      if (f < p.microbatches) ops.push_back(F(r, f++));
    }
  }
  return s;
}

Schedule pytorch_pipeline_order(const SynthParams& p) {
  Schedule s = make_schedule(p, 1, PlacementStyle::Loop);
  for (std::uint32_t r = 0; r < p.ranks; ++r) {
    auto& ops = s.ranks[r].actions;
    std::uint32_t warmup = p.ranks - 1 - r;
    for (std::uint32_t f = 0; f < warmup; ++f) ops.push_back(F(r, f));
    // PyTorch's bug: the steady forwards start one past the last warm-up index, which it takes
    // as 0 when there was no warm-up.
    std::uint32_t f = warmup == 0 ? 1 : warmup;
    std::uint32_t b = 0;
    for (std::uint32_t k = warmup; k < p.microbatches; ++k) {
      ops.push_back(F(r, f++));
      ops.push_back(B(r, b++));
    }
    while (b < p.microbatches) ops.push_back(B(r, b++));
  }
  return add_reduce_grad(s, p.microbatches);
}

}  // namespace

Schedule one_f_one_b(const SynthParams& p) {
  check(p);
  return p.pytorch_compat ? pytorch_pipeline_order(p) : runtime_order(p);
}

}  // namespace ppsched::synth
