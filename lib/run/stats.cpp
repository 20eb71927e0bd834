#include "run/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ppsched::run {

SampleStats summarize(std::span<const double> samples) {
  SampleStats s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::vector<double> v(samples.begin(), samples.end());
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  s.min = v.front();
  s.max = v.back();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  // Nearest rank: the smallest value with at least 99% of the samples at or below it.
  const auto rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(n)));
  s.p99 = v[std::max<std::size_t>(rank, 1) - 1];
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(n);
  if (n > 1) {
    double sq = 0;
    for (double x : v) sq += (x - s.mean) * (x - s.mean);
    s.stdev = std::sqrt(sq / static_cast<double>(n - 1));
  }
  s.cv_pct = s.mean > 0 ? 100.0 * s.stdev / s.mean : 0.0;
  return s;
}

std::string stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::NotYet:
      return "not yet";
    case StopReason::Converged:
      return "converged";
    case StopReason::Iterations:
      return "iterations";
    case StopReason::Timeout:
      return "timeout";
    case StopReason::Interrupted:
      return "interrupted";
  }
  return "?";
}

void Stopper::add(double sample_us) {
  ++n_;
  total_us_ += sample_us;
  const double delta = sample_us - mean_;
  mean_ += delta / static_cast<double>(n_);
  m2_ += delta * (sample_us - mean_);
}

double Stopper::noise_pct() const {
  if (n_ < 2 || mean_ <= 0) return 0.0;
  return 100.0 * std::sqrt(m2_ / static_cast<double>(n_ - 1)) / mean_;
}

StopReason Stopper::check(double wall_s) const {
  if (rule_.max_iters && n_ >= rule_.max_iters) return StopReason::Iterations;
  if (wall_s >= rule_.timeout_s) return StopReason::Timeout;
  if (rule_.max_iters) return StopReason::NotYet;  // a fixed count (-n) ignores the noise rule
  if (n_ < std::max<std::size_t>(rule_.min_samples, 1)) return StopReason::NotYet;
  if (total_us_ * 1e-6 < rule_.min_time_s) return StopReason::NotYet;
  return noise_pct() <= rule_.max_noise_pct ? StopReason::Converged : StopReason::NotYet;
}

}  // namespace ppsched::run
