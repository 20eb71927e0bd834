// The megatron runtime model against the Zero Bubble paper's measured runs (tests/support/
// zero_bubble_runs.hpp): with the shipped A100 figures, every predicted iteration time within 5% of
// the measured one, and the throughput ratio to 1F1B within 2% for 1F1B-I but only within 5% for
// ZB-1p and ZB-2p. Those are ppsched's automatic schedule at the paper's caps, searched for the
// shortest rank span as a post-validated run pays; at cap 2p it now finds the spans of the authors'
// zb.py (at 1.5B, m=24, a per-stage bubble of 0.0433, the paper's), and the model predicts them
// 1.8-5.0% faster than measured (ratio errors up to +4.8%): the per-call overhead was fitted when
// ppsched's ZB-2p was a weaker schedule, and the runs pay something the model does not have yet
// (docs/bench.md). A joint refit is the follow-up.
#include <cmath>

#include "support/catch.hpp"
#include "support/zero_bubble_runs.hpp"

using namespace ppsched;
using namespace ppsched::zb_runs;

TEST_CASE("megatron runtime: the Zero Bubble paper's measured A100 runs within 5%, ratios to 1F1B within 2% (ZB: 5%)") {
  for (const Run& r : kRuns) {
    double pred[4], meas[4];
    for (std::size_t i = 0; i < kScheds.size(); ++i) {
      pred[i] = predicted_us(r, kScheds[i]);
      meas[i] = measured_us(r, kScheds[i]);
      INFO(r.model << " p=" << r.p << " m=" << r.m << " " << name(kScheds[i]) << ": predicted " << pred[i]
                   << " us, measured " << meas[i] << " us");
      CHECK(std::abs(pred[i] - meas[i]) / meas[i] <= 0.05);
    }
    const std::size_t base = 2;  // 1F1B
    for (std::size_t i : {0u, 1u, 3u}) {
      const double ratio_error = (pred[base] / pred[i]) / (meas[base] / meas[i]) - 1;
      INFO(r.model << " p=" << r.p << " m=" << r.m << " " << name(kScheds[i]) << " to 1F1B: " << 100 * ratio_error
                   << "%");
      CHECK(std::abs(ratio_error) <= (kScheds[i] == Sched::Interleaved ? 0.02 : 0.05));
    }
  }
}

TEST_CASE("megatron runtime: without its call overhead it predicts every run too fast, as the ideal model does") {
  // The calibrated figure carries the missing time; at 0 the model is the bare transfer timing.
  RuntimeParams bare = megatron_a100_params();
  bare.p2p_call_overhead_us = 0;
  const Run& r = kRuns[0];
  for (Sched s : kScheds) {
    INFO(name(s));
    CHECK(predicted_us(r, s, bare) < predicted_us(r, s));
  }
  CHECK(predicted_us(r, Sched::OneFOneB, bare) < 0.97 * measured_us(r, Sched::OneFOneB));
}
