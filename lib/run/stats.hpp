// Sample statistics and the stopping rule of `ppsched run`, as nccl-tests and nvbench define them
// (docs: conventions §6): median, min, max, p99 by nearest rank, mean, and the relative standard
// deviation (CV%, nvbench's "noise"). Pure functions over a list of samples.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace ppsched::run {

struct SampleStats {
  std::size_t count = 0;
  double median = 0, min = 0, max = 0, mean = 0;
  double p99 = 0;     ///< nearest rank: the ceil(0.99 n)-th smallest (equals max below 100 samples)
  double stdev = 0;   ///< sample standard deviation (n - 1)
  double cv_pct = 0;  ///< 100 * stdev / mean
};

/// Statistics of `samples` (any order; all zero when empty).
SampleStats summarize(std::span<const double> samples);

/// When to stop timing (nvbench's rule): at least min_samples samples and min_time_s seconds of
/// measured time, then stop as soon as the noise is at most max_noise_pct; give up at timeout_s
/// of wall time. max_iters > 0 (`-n`) instead runs exactly that many samples (or to the timeout).
struct StopRule {
  std::size_t min_samples = 10;
  double min_time_s = 0.5;
  double max_noise_pct = 0.5;
  double timeout_s = 15;
  std::size_t max_iters = 0;
};

enum class StopReason { NotYet, Converged, Iterations, Timeout, Interrupted };
/// "converged", "iterations", "timeout", "interrupted".
std::string stop_reason_name(StopReason r);

/// Applies a StopRule to samples as they come, in constant time per sample (Welford's running
/// mean and variance), so a fast device with thousands of iterations is not slowed down.
class Stopper {
 public:
  explicit Stopper(const StopRule& rule) : rule_(rule) {}
  void add(double sample_us);
  /// Whether to stop now, `wall_s` seconds after timing began.
  StopReason check(double wall_s) const;
  double noise_pct() const;

 private:
  StopRule rule_;
  std::size_t n_ = 0;
  double mean_ = 0, m2_ = 0, total_us_ = 0;
};

}  // namespace ppsched::run
