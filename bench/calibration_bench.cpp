// Prints the megatron runtime model against the Zero Bubble paper's measured A100 runs
// (tests/support/zero_bubble_runs.hpp): per run and schedule the measured and predicted iteration
// time, the error, and the error of the throughput ratio to 1F1B. The table in docs/bench.md is
// this output. A second table does the same with each run's F, I and W priced from the shipped model
// files (schedules/zb-gpt-*.model.json, --gpu a100) instead of profiled: the op-level cost model
// and the runtime model together. Not a timing benchmark: it takes no Google Benchmark flags.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "diag/diagnostic.hpp"
#include "support/zero_bubble_profiles.hpp"
#include "support/zero_bubble_runs.hpp"

using namespace ppsched;
using namespace ppsched::zb_runs;

namespace {

// `r` with its middle-stage costs priced from its model file instead of profiled.
Run priced(const Run& r) {
  for (const zb_profiles::Profile& p : zb_profiles::profiles()) {
    if (p.model != r.model) continue;
    DiagnosticSink sink;
    const auto m = zb_profiles::load_model(p, sink);
    if (!m) throw std::runtime_error("cannot read schedules/" + std::string(p.file));
    const zb_profiles::StageTimes t = zb_profiles::predicted(*m, p, *find_gpu("a100"));
    Run out = r;
    out.t_f = t.f_ms;
    out.t_b = t.i_ms;
    out.t_w = t.w_ms;
    return out;
  }
  return r;
}

void table(const char* what, bool from_model, const RuntimeParams& params) {
  fmt::print("# {}\n", what);
  fmt::print("# iteration times in ms; ratio: error of the predicted throughput ratio to 1F1B\n");
  fmt::print("{:<6} {:>3} {:>4}  {:<7} {:>9} {:>9} {:>7} {:>7}\n", "model", "p", "m", "sched", "measured", "predicted",
             "error", "ratio");
  double worst = 0, worst_ratio = 0;
  int in_order = 0;
  for (const Run& measured_run : kRuns) {
    const Run r = from_model ? priced(measured_run) : measured_run;
    double pred[4], meas[4];
    for (std::size_t i = 0; i < kScheds.size(); ++i) {
      pred[i] = predicted_us(r, kScheds[i], params);
      meas[i] = measured_us(r, kScheds[i]);
    }
    for (std::size_t i = 0; i < kScheds.size(); ++i) {
      const double error = 100 * (pred[i] / meas[i] - 1);
      const double ratio = kScheds[i] == Sched::OneFOneB ? 0 : 100 * ((pred[2] / pred[i]) / (meas[2] / meas[i]) - 1);
      worst = std::max(worst, std::abs(error));
      worst_ratio = std::max(worst_ratio, std::abs(ratio));
      fmt::print("{:<6} {:>3} {:>4}  {:<7} {:>9.1f} {:>9.1f} {:>+6.1f}% {:>7}\n", r.model, r.p, r.m, name(kScheds[i]),
                 meas[i] / 1e3, pred[i] / 1e3, error,
                 kScheds[i] == Sched::OneFOneB ? std::string("-") : fmt::format("{:+.1f}%", ratio));
    }
    // In order: every pair the measurement tells apart comes out the same way (the paper's
    // throughputs have three digits; equal ones are a tie either order matches).
    bool same = true;
    for (std::size_t i = 0; i < 4; ++i)
      for (std::size_t j = 0; j < 4; ++j) same = same && !(meas[i] < meas[j] && !(pred[i] < pred[j]));
    in_order += same;
  }
  fmt::print(
      "# largest error {:.1f}%, largest ratio error {:.1f}%, measured order (ties either way) in {} of {} rows\n",
      worst, worst_ratio, in_order, kRuns.size());
}

}  // namespace

int main() {
  const RuntimeParams params = megatron_a100_params();
  fmt::print("# --runtime megatron, {} us per p2p call ({})\n", params.p2p_call_overhead_us, params.hardware);
  table("profiled F, I, W", false, params);
  table("F, I, W priced from the model files (--gpu a100)", true, params);
  return 0;
}
