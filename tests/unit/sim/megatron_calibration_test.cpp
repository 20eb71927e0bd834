// The megatron runtime model against the Zero Bubble paper's measured runs (tests/support/
// zero_bubble_runs.hpp): with the shipped A100 figures, every predicted iteration time within 5% of
// the measured one, and the throughput ratio to 1F1B within 2% for 1F1B-I but only within 3.5% for
// ZB-1p and ZB-2p: they are ppsched's automatic schedule at the paper's caps, searched for the
// shortest rank span as a post-validated run pays, but not yet as short as the paper's (at 1.5B,
// m=24, ZB-2p's per-stage bubble is 0.086 against the paper's 0.043); the ratio errors reach +2.2%
// (ZB-1p) and -2.0% (ZB-2p) (docs/bench.md).
#include <cmath>

#include "support/catch.hpp"
#include "support/zero_bubble_runs.hpp"

using namespace ppsched;
using namespace ppsched::zb_runs;

TEST_CASE("megatron runtime: the Zero Bubble paper's measured A100 runs within 5%, ratios to 1F1B within 2% (ZB: 3.5%)") {
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
      CHECK(std::abs(ratio_error) <= (kScheds[i] == Sched::Interleaved ? 0.02 : 0.035));
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
