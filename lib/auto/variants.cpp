// The greedy variants of the automatic search (variants.hpp).
#include "auto/variants.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ppsched::auto_detail {

// The caps the greedy aims for: the real one first, then the memory of the handcrafted shapes
// (2p-1 and p microbatches of activation: ZB-H2, ZB-H1; and for two chunks (p+2)/2: V-Half), each
// only when lower. V-Half's memory is a V shape's: with one chunk, aiming that low only starves
// the pipeline. (The figures behind this file's choices: docs/bench.md, "Figures behind the
// search's rules".)
std::vector<double> target_caps(const AutoParams& p, const Shape& sh) {
  double unit = 0;  // one microbatch's activation on the busiest rank
  for (std::uint32_t r = 0; r < sh.ranks; ++r) {
    double sum = sh.base[r];
    for (std::uint32_t s : sh.own[r]) sum += sh.act[s];
    unit = std::max(unit, sum);
  }
  double cap = p.memory_cap > 0 ? p.memory_cap : unit * 2 * p.ranks;
  std::vector<double> caps{cap};
  std::vector<double> shapes{2.0 * p.ranks - 1, 1.0 * p.ranks};
  if (p.stages_per_rank == 2) shapes.push_back((p.ranks + 2) / 2.0);
  for (double k : shapes) {
    // Each cap once: at p = 2, ZB-H1's p and V-Half's (p+2)/2 are the same 2 microbatches.
    const bool seen =
        std::any_of(caps.begin(), caps.end(), [&](double c) { return std::abs(c - k * unit) <= kSameMemory; });
    if (k * unit < cap - kSameMemory && k * unit >= unit && !seen) caps.push_back(k * unit);
  }
  return caps;
}

std::vector<GreedyPolicy> greedy_variants(const AutoParams& p, const Shape& sh) {
  // W before F only for two chunks: with one, a W taken before a forward that fits only delays
  // the pipeline, which ZB-H1 (a candidate of the search) already covers (docs/bench.md).
  const bool v = p.stages_per_rank == 2;
  const std::vector<bool> weight_orders = v ? std::vector<bool>{false, true} : std::vector<bool>{false};
  std::vector<GreedyPolicy> policies;
  for (double cap : target_caps(p, sh))
    for (bool late_first : v ? std::vector<bool>{true, false} : std::vector<bool>{true})
      for (bool weight_first : weight_orders) {
        policies.push_back({.target_cap = cap, .weight_first = weight_first, .late_chunk_first = late_first});
        // Room for one second chunk only with the late chunk first and F before W, the combination
        // where it wins; in the three others it costs a run for what it rarely finds.
        if (v && late_first && !weight_first)
          policies.push_back(
              {.target_cap = cap, .weight_first = false, .late_chunk_first = true, .reserve_each = false});
      }
  // The variants that aim at the real cap (the first one, or for V the first three) again, each
  // waiting for a due I (GreedyPolicy::wait_for_input_grad): where the warm-up and cool-down are
  // most of the run (m = p) it is what matches the Zero Bubble authors' V search. Only these, the
  // ones whose waiting copies win: waiting in every variant costs more runs than it wins
  // (docs/bench.md).
  const std::size_t n = std::min<std::size_t>(3, policies.size());
  for (std::size_t k = 0; k < n && policies[k].target_cap == policies[0].target_cap; ++k) {
    GreedyPolicy waiting = policies[k];
    waiting.wait_for_input_grad = true;
    policies.push_back(waiting);
  }
  // The Zero Bubble paper's shape, at the real cap: forwards and input gradients alternating once
  // the first I has arrived (GreedyPolicy::forward_after_input_grad), a forward never started
  // when it would hold up a due I, and W's run whenever nothing else can (only_forwards_wait),
  // unless the rank can still afford to wait (balance_idle; the second of the two runs without
  // it). Under post-validated they go first: at cap 2p with the paper's profiled costs the first
  // finds the per-stage spans of the authors' zb.py (docs/bench.md), and its span is then the
  // mark the others must beat. Under sync they rarely win the makespan, so they come last. A third
  // also makes room first (GreedyPolicy::make_room_first): with M_W = M_B an input gradient frees
  // nothing, so a full rank admits its next forward only once a W has run, and only then does this
  // shape reach zb.py's spans (docs/bench.md).
  const GreedyPolicy first = policies[0];
  std::vector<GreedyPolicy> paper(3, first);
  for (GreedyPolicy& pol : paper) {
    pol.wait_for_input_grad = true;
    pol.only_forwards_wait = true;
    pol.forward_after_input_grad = true;
  }
  paper[0].balance_idle = true;
  paper[2].balance_idle = true;
  paper[2].make_room_first = true;
  if (p.optimizer == Optimizer::PostValidated) policies.insert(policies.begin(), paper.begin(), paper.end());
  // For V, up to m = 4p: the first variant once more, waiting and running the first chunk's I
  // before the second's (GreedyPolicy::first_chunk_input_grad_first). Where the cool-down is much
  // of the run it can end the input-gradient chains sooner, as the Zero Bubble authors' V search
  // does at m = p; with more microbatches it only costs time, running to near its end.
  const bool short_run = p.microbatches <= 4 * p.ranks;
  if (v && short_run) {
    GreedyPolicy first_chunk_first = first;
    first_chunk_first.wait_for_input_grad = true;
    first_chunk_first.first_chunk_input_grad_first = true;
    policies.push_back(first_chunk_first);
  }
  // Under sync they (and the V variants below) only run up to m = 4p, where the warm-up and
  // cool-down are much of the run and so is what they change; with more microbatches they win
  // nothing and, giving up only late, they would be much of the search's time (docs/bench.md).
  if (p.optimizer != Optimizer::PostValidated && short_run) policies.insert(policies.end(), paper.begin(), paper.end());
  // V: the second-chunk room of V-Min with forwards after each I, with and without waiting for a
  // due I. Near m = p these keep a rank's second-chunk forwards moving while its input
  // gradients arrive, where the other variants let them wait (docs/bench.md).
  if (v && short_run) {
    GreedyPolicy alternate = first;
    alternate.reserve_each = false;
    alternate.forward_after_input_grad = true;
    policies.push_back(alternate);
    alternate.wait_for_input_grad = true;
    policies.push_back(alternate);
    // With a transfer time between ranks, also waiting for the second chunk's next forward
    // (GreedyPolicy::wait_for_late_forward), in this variant and in the paper's shape: a
    // first-chunk forward taken just before the second chunk's input arrives delays every stage
    // after it; at m = p that is where the others fall behind the authors' V search
    // (docs/bench.md).
    alternate.wait_for_late_forward = true;
    policies.push_back(alternate);
    // And making room: when a ready forward does not fit, the oldest W runs before a ready I
    // (GreedyPolicy::make_room_first). With M_W = M_B an input gradient frees nothing, so at
    // m = p + 1 a full rank admits its last microbatch only once W's have run.
    alternate.make_room_first = true;
    policies.push_back(alternate);
    GreedyPolicy paper_late = paper[0];
    paper_late.wait_for_late_forward = true;
    policies.push_back(paper_late);
  }
  return policies;
}

std::vector<GreedyPolicy> exploration_variants(const AutoParams& p, const Shape& sh,
                                               const std::vector<GreedyPolicy>& tried) {
  // The first round above keeps to the combinations that win often, so that large searches stay
  // fast. At tight caps with uneven costs the others can win by much (docs/bench.md, "Tight
  // caps"). One chunk has only two combinations left (W before F, with and without the wait),
  // which gain too little for their time, so the round is for V only.
  if (p.stages_per_rank != 2) return {};
  const double cap = target_caps(p, sh).front();

  std::vector<GreedyPolicy> out;
  for (unsigned bits = 0; bits < 32; ++bits) {
    const GreedyPolicy pol{.target_cap = cap,
                           .weight_first = (bits & 1) != 0,
                           .late_chunk_first = (bits & 4) != 0,
                           .reserve_each = (bits & 8) != 0,
                           .wait_for_input_grad = (bits & 2) != 0,
                           .first_chunk_input_grad_first = (bits & 16) != 0};
    const bool seen = std::any_of(tried.begin(), tried.end(), [&](const GreedyPolicy& t) { return t == pol; });
    if (!seen) out.push_back(pol);
  }
  return out;
}

std::string describe(const GreedyPolicy& pol, std::uint32_t stages_per_rank) {
  return fmt::format("greedy (aim {:.4g}, {}{}{}{})", pol.target_cap, pol.weight_first ? "W before F" : "F before W",
                     stages_per_rank == 2 ? (pol.late_chunk_first ? ", late chunk first" : ", early chunk first") : "",
                     pol.reserve_each ? "" : ", second-chunk room as V-Min's",
                     std::string(pol.wait_for_input_grad
                                     ? (pol.only_forwards_wait ? ", forwards wait for a due I" : ", waits for a due I")
                                     : "") +
                         (pol.balance_idle ? ", W's wait while the rank can afford it" : "") +
                         (pol.forward_after_input_grad ? ", F after each I" : "") +
                         (pol.wait_for_late_forward ? ", waits for a due second-chunk F" : "") +
                         (pol.make_room_first ? ", W's make room for a ready F first" : "") +
                         (pol.first_chunk_input_grad_first ? ", first chunk's I first" : ""));
}

}  // namespace ppsched::auto_detail
