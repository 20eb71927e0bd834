#include "synth/interleaved_ops.hpp"

#include <algorithm>
#include <string>

#include "synth/families.hpp"

namespace ppsched::synth {

InterleavedShape interleaved_shape(std::uint32_t ranks, std::uint32_t microbatches, std::uint32_t local_stages,
                                   const char* what) {
  InterleavedShape s{ranks, microbatches, local_stages, 0, 0};
  s.rounds = std::max<std::uint32_t>(1, microbatches / ranks);
  s.per_round = microbatches / s.rounds;
  if (microbatches % s.rounds != 0)
    throw SynthError(std::string(what) +
                     " requires the number of microbatches to be a multiple of the number of "
                     "rounds (" +
                     std::to_string(s.rounds) + "), but got " + std::to_string(microbatches) + ".");
  return s;
}

std::vector<Action> interleaved_rank_ops(const InterleavedShape& sh, std::uint32_t rank, bool zero_bubble) {
  const std::int64_t R = sh.ranks, L = sh.local_stages, r = rank;
  const std::int64_t per_round = sh.per_round;
  // Forwards before the first backward: the last rank waits (L-1) rounds; each hop further
  // from it waits 2 more ops (1 with zero bubble), capped at all the forwards there are.
  const std::int64_t hop = zero_bubble ? 1 : 2;
  const std::int64_t warmup =
      std::min<std::int64_t>((L - 1) * per_round + hop * (R - 1 - r), std::int64_t{sh.microbatches} * L);
  const std::int64_t microbatch_ops = L * sh.microbatches;
  const std::int64_t fwd_bwd = microbatch_ops - warmup;
  const std::int64_t cooldown = microbatch_ops - fwd_bwd;
  const std::int64_t total = warmup + fwd_bwd + cooldown;
  const std::int64_t post_warmup = zero_bubble ? R - r - 1 : (L * R + 2 * (R - 1 - r)) - (warmup + r);

  auto forward_stage = [&](std::int64_t op) { return static_cast<std::uint32_t>(((op / per_round) % L) * R + r); };
  auto backward_stage = [&](std::int64_t op) {
    return static_cast<std::uint32_t>((L - 1 - ((op - warmup) / per_round) % L) * R + r);
  };
  std::vector<std::uint32_t> f_mb(static_cast<std::size_t>(L * R), 0), b_mb(f_mb), w_mb(f_mb);
  std::vector<std::int64_t> backward_ops;
  std::size_t weights_done = 0;
  std::vector<Action> ops;
  idle(ops, r);
  auto weight = [&] {
    std::uint32_t stage = backward_stage(backward_ops[weights_done++]);
    ops.push_back(W(stage, w_mb[stage]++));
  };
  auto backward = [&](std::int64_t op) {
    std::uint32_t stage = backward_stage(op);
    ops.push_back(zero_bubble ? I(stage, b_mb[stage]++) : B(stage, b_mb[stage]++));
    backward_ops.push_back(op);
    if (zero_bubble && op - warmup >= r) weight();
  };
  for (std::int64_t op = 0; op < total; ++op) {
    if (op < warmup) {
      std::uint32_t stage = forward_stage(op);
      ops.push_back(F(stage, f_mb[stage]++));
      if (op == warmup - 1) idle(ops, post_warmup);
    } else if (op < warmup + fwd_bwd) {
      std::uint32_t stage = forward_stage(op);
      ops.push_back(F(stage, f_mb[stage]++));
      backward(op);
    } else {
      if (!zero_bubble) ops.push_back(Action::idle());
      backward(op);
    }
  }
  while (zero_bubble && weights_done < backward_ops.size()) weight();
  return ops;
}

}  // namespace ppsched::synth
