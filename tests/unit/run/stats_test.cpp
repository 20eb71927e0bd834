// Statistics and the stopping rule, on samples whose answers are known by hand.
#include <vector>

#include "run/stats.hpp"
#include "support/catch.hpp"

using namespace ppsched::run;

TEST_CASE("summary statistics: median, nearest-rank p99, sample stdev and CV") {
  std::vector<double> v = {5, 1, 4, 2, 3};
  SampleStats s = summarize(v);
  CHECK(s.count == 5);
  CHECK(s.median == 3);
  CHECK(s.min == 1);
  CHECK(s.max == 5);
  CHECK(s.mean == 3);
  CHECK(s.p99 == 5);  // below 100 samples nearest-rank p99 is the max
  CHECK(s.stdev == Approx(1.5811388300841898));
  CHECK(s.cv_pct == Approx(100 * 1.5811388300841898 / 3));
  std::vector<double> even = {1, 2, 3, 10};
  CHECK(summarize(even).median == 2.5);
  std::vector<double> hundred_and_one;
  for (int i = 1; i <= 200; ++i) hundred_and_one.push_back(i);
  CHECK(summarize(hundred_and_one).p99 == 198);  // ceil(0.99 * 200) = 198th smallest
  CHECK(summarize(std::vector<double>{}).count == 0);
}

TEST_CASE("the stop rule: min samples and min time first, then noise, -n fixes the count, timeout wins") {
  StopRule rule;  // 10 samples, 0.5 s, 0.5 % noise, 15 s
  Stopper quiet(rule);
  for (int i = 0; i < 9; ++i) quiet.add(100000);  // 0.1 s each
  CHECK(quiet.check(1.0) == StopReason::NotYet);  // 9 samples
  quiet.add(100000);
  CHECK(quiet.check(1.0) == StopReason::Converged);  // 10 samples, 1 s, no noise

  Stopper short_samples(rule);
  for (int i = 0; i < 10; ++i) short_samples.add(1000);  // 10 ms in all: below min time
  CHECK(short_samples.check(0.1) == StopReason::NotYet);

  Stopper noisy(rule);
  for (int i = 0; i < 20; ++i) noisy.add(i % 2 ? 90000 : 110000);  // 10 % noise
  CHECK(noisy.noise_pct() > 5);
  CHECK(noisy.check(2.0) == StopReason::NotYet);
  CHECK(noisy.check(15.0) == StopReason::Timeout);

  StopRule fixed = rule;
  fixed.max_iters = 3;
  Stopper n(fixed);
  n.add(1);
  n.add(1);
  CHECK(n.check(0) == StopReason::NotYet);
  n.add(1);
  CHECK(n.check(0) == StopReason::Iterations);
}
