// Prints the megatron runtime model against the Zero Bubble paper's measured A100 runs
// (tests/support/zero_bubble_runs.hpp): per run and schedule the measured and predicted iteration
// time, the error, and the error of the throughput ratio to 1F1B. The table in docs/bench.md is
// this output. Not a timing benchmark: `ppsched_bench_calibration` takes no Google Benchmark flags.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "support/zero_bubble_runs.hpp"

using namespace ppsched;
using namespace ppsched::zb_runs;

int main() {
  const RuntimeParams params = megatron_a100_params();
  fmt::print("# --runtime megatron, {} us per p2p call ({})\n", params.p2p_call_overhead_us, params.hardware);
  fmt::print("# iteration times in ms; ratio: error of the predicted throughput ratio to 1F1B\n");
  fmt::print("{:<6} {:>3} {:>4}  {:<7} {:>9} {:>9} {:>7} {:>7}\n", "model", "p", "m", "sched", "measured", "predicted",
             "error", "ratio");
  double worst = 0, worst_ratio = 0;
  for (const Run& r : kRuns) {
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
  }
  fmt::print("# largest error {:.1f}%, largest ratio error {:.1f}%\n", worst, worst_ratio);
  return 0;
}
