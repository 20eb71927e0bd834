// The op-level cost model against the profiles it is fitted on (tests/support/
// zero_bubble_profiles.hpp): from the shipped model files alone, with the shipped A100 table, every
// middle-stage F, I and W of the Zero Bubble paper's 1.5B and 14.6B GPT within 10% of the profiled
// time (the fit reaches 2.8%: bench/op_cost_fit.cpp). And what the fit must not lose: W is well
// under F (it has no attention and no elementwise forward), as profiled.
#include <cmath>

#include "diag/diagnostic.hpp"
#include "support/catch.hpp"
#include "support/zero_bubble_profiles.hpp"

using namespace ppsched;
using namespace ppsched::zb_profiles;

TEST_CASE("op cost model: the Zero Bubble paper's middle-stage F, I and W within 10%, from the model files") {
  const GpuSpec& a100 = *find_gpu("a100");
  for (const Profile& p : profiles()) {
    DiagnosticSink sink;
    const auto m = load_model(p, sink);
    REQUIRE(m);
    const StageTimes t = predicted(*m, p, a100);
    INFO(p.model << ": F " << t.f_ms << " (" << p.f_ms << "), I " << t.i_ms << " (" << p.i_ms << "), W " << t.w_ms
                 << " (" << p.w_ms << ") ms");
    CHECK(std::abs(t.f_ms / p.f_ms - 1) <= 0.10);
    CHECK(std::abs(t.i_ms / p.i_ms - 1) <= 0.10);
    CHECK(std::abs(t.w_ms / p.w_ms - 1) <= 0.10);
    CHECK(t.w_ms / t.f_ms < 0.8);
  }
}

TEST_CASE("op cost model: the same blocks under flash attention without dropout are faster in F and I, not in W") {
  const GpuSpec& a100 = *find_gpu("a100");
  for (const Profile& p : profiles()) {
    DiagnosticSink sink;
    auto m = load_model(p, sink);
    REQUIRE(m);
    const StageTimes eager = predicted(*m, p, a100);
    m->attention = AttentionKind::Flash;
    m->attention_dropout = m->hidden_dropout = 0;
    const StageTimes flash = predicted(*m, p, a100);
    INFO(p.model);
    CHECK(flash.f_ms < 0.9 * eager.f_ms);
    CHECK(flash.i_ms < 0.9 * eager.i_ms);
    CHECK(flash.w_ms == eager.w_ms);
  }
}

TEST_CASE("op cost model with the megatron runtime: the paper's runs from the model files alone") {
  // Every iteration time of 1F1B, 1F1B-I, ZB-1p and ZB-2p within 10% of the measured one, every
  // throughput ratio to 1F1B within 3%, and the measured order in every row (a tie of the paper's
  // three-digit throughputs matches either way). The bench prints 2.4%, 1.9% and 6 of 6.
  using namespace ppsched::zb_runs;
  for (const Run& measured_run : kRuns) {
    const Run r = priced(measured_run);
    double pred[4], meas[4];
    for (std::size_t i = 0; i < kScheds.size(); ++i) {
      pred[i] = predicted_us(r, kScheds[i]);
      meas[i] = measured_us(r, kScheds[i]);
      INFO(r.model << " m=" << r.m << " " << name(kScheds[i]) << ": predicted " << pred[i] << " us, measured "
                   << meas[i]);
      CHECK(std::abs(pred[i] / meas[i] - 1) <= 0.10);
    }
    const std::size_t base = 2;  // 1F1B
    for (std::size_t i : {0u, 1u, 3u}) {
      INFO(r.model << " m=" << r.m << " " << name(kScheds[i]) << " to 1F1B");
      CHECK(std::abs((pred[base] / pred[i]) / (meas[base] / meas[i]) - 1) <= 0.03);
    }
    for (std::size_t i = 0; i < 4; ++i)
      for (std::size_t j = 0; j < 4; ++j) {
        INFO(r.model << " m=" << r.m << ": " << name(kScheds[i]) << " measured faster than " << name(kScheds[j]));
        if (meas[i] < meas[j]) CHECK(pred[i] < pred[j]);
      }
  }
}
