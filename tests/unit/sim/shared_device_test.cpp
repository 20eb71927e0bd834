// Ranks that share a device take turns on its compute (TimedOptions::device_of_rank): the model
// `ppsched run` predicts with when several ranks run on one GPU.
#include <algorithm>
#include <random>

#include "sim/timed.hpp"
#include "support/catch.hpp"
#include "support/kind_costs.hpp"
#include "synth/synth.hpp"

using namespace ppsched;

namespace {

TimedOptions options(const Schedule& s, const KindCosts& per_rank, std::vector<std::uint32_t> devices) {
  TimedOptions opt;
  const std::uint32_t v = s.num_stages / static_cast<std::uint32_t>(s.rank_count());
  opt.costs = CostModel::uniform(s.num_stages, v, per_rank);
  opt.device_of_rank = std::move(devices);
  return opt;
}

KindCosts costs(double f, double i, double w) { return test::fiw_costs(f, i, w); }

bool is_busy(const Timeline& t, std::uint32_t e) { return t.stream[e] == Stream::Compute && t.end[e] > t.start[e]; }

// Compute intervals of the ranks on each device never overlap; returns each device's busy time.
std::vector<double> check_turns(const Timeline& t, const std::vector<std::uint32_t>& device_of_rank) {
  const std::uint32_t devices = *std::max_element(device_of_rank.begin(), device_of_rank.end()) + 1;
  std::vector<std::vector<std::pair<double, double>>> spans(devices);
  for (std::uint32_t r = 0; r < t.rank_count(); ++r)
    for (std::uint32_t e = t.rank_begin[r]; e < t.rank_begin[r + 1]; ++e)
      if (is_busy(t, e)) spans[device_of_rank[r]].emplace_back(t.start[e], t.end[e]);
  std::vector<double> busy(devices, 0.0);
  for (std::uint32_t d = 0; d < devices; ++d) {
    std::sort(spans[d].begin(), spans[d].end());
    for (std::size_t i = 0; i < spans[d].size(); ++i) {
      busy[d] += spans[d][i].second - spans[d][i].first;
      if (i > 0) REQUIRE(spans[d][i].first >= spans[d][i - 1].second - 1e-9);
    }
  }
  return busy;
}

}  // namespace

TEST_CASE("ranks_on_devices spreads ranks in contiguous blocks, as ppsched run does") {
  CHECK(ranks_on_devices(8, 2) == std::vector<std::uint32_t>{0, 0, 0, 0, 1, 1, 1, 1});
  CHECK(ranks_on_devices(5, 2) == std::vector<std::uint32_t>{0, 0, 0, 1, 1});
  CHECK(ranks_on_devices(3, 3) == std::vector<std::uint32_t>{0, 1, 2});
  CHECK_FALSE(shares_devices(ranks_on_devices(3, 3)));
  CHECK(shares_devices(ranks_on_devices(3, 2)));
}

TEST_CASE("two ranks on one device: 1F1B, p = 2, m = 2, worked by hand") {
  // rank 0: F0 F1 B0 B1, rank 1: F0 B0 F1 B1; F = 1, B = 2. The device runs the earliest-ready
  // action, the lower rank first on a tie:
  //   r0 F0 [0,1]; at 1 r0 F1 and r1 F0 are ready: r0 F1 [1,2], r1 F0 [2,3]; r1 B0 [3,5];
  //   at 5 r0 B0 and r1 F1 are ready: r0 B0 [5,7], r1 F1 [7,8]; r1 B1 [8,10]; r0 B1 [10,12].
  const Schedule s = synthesize("1F1B", {2, 2});
  const Timeline t = simulate_timed(s, s.placement.stage_to_rank, options(s, unit_costs(), {0, 0}));
  auto starts_of = [&](std::uint32_t r) {
    std::vector<double> out;
    for (std::uint32_t e = t.rank_begin[r]; e < t.rank_begin[r + 1]; ++e)
      if (is_busy(t, e)) out.push_back(t.start[e]);
    return out;
  };
  CHECK(starts_of(0) == std::vector<double>{0, 1, 5, 10});
  CHECK(starts_of(1) == std::vector<double>{2, 3, 7, 8});
  CHECK(t.makespan == 12);
}

TEST_CASE("on a shared device the compute of its ranks never overlaps and fills it") {
  std::mt19937 rng(31);
  std::uniform_real_distribution<double> cost(0.5, 2.0);
  for (const char* family : {"1F1B", "ZBH1", "ZBVZeroBubble", "Interleaved1F1B", "DualPipeV"}) {
    for (std::uint32_t p : {4u, 8u}) {
      DYNAMIC_SECTION(family << ", p = " << p) {
        const Schedule s = synthesize(family, {p, 2 * p});
        const KindCosts c = costs(cost(rng), cost(rng), cost(rng));
        const Timeline alone = simulate_timed(s, s.placement.stage_to_rank, options(s, c, {}));
        // One device: its busy time is all the work, and nothing is ever ready while it idles
        // (with free transfers some rank always has an action ready), so the makespan is the
        // sum of every action's cost.
        const std::vector<std::uint32_t> one(p, 0);
        const Timeline shared = simulate_timed(s, s.placement.stage_to_rank, options(s, c, one));
        const double work = check_turns(shared, one)[0];
        CHECK(shared.makespan == Approx(work).epsilon(1e-12));
        CHECK(shared.makespan >= alone.makespan);
        // Two devices, half the ranks each: each device's compute is serial, and the iteration
        // lies between the unshared one and all the work on one device.
        const std::vector<std::uint32_t> two = ranks_on_devices(p, 2);
        const Timeline halves = simulate_timed(s, s.placement.stage_to_rank, options(s, c, two));
        const std::vector<double> busy = check_turns(halves, two);
        CHECK(halves.makespan >= std::max(busy[0], busy[1]) - 1e-9);
        CHECK(halves.makespan >= alone.makespan - 1e-9);
        CHECK(halves.makespan <= shared.makespan + 1e-9);
        // A device per rank is no sharing at all: the same timeline as none given.
        std::vector<std::uint32_t> own(p);
        for (std::uint32_t r = 0; r < p; ++r) own[r] = r;
        const Timeline separate = simulate_timed(s, s.placement.stage_to_rank, options(s, c, own));
        CHECK(separate.start == alone.start);
        CHECK(separate.end == alone.end);
      }
    }
  }
}

TEST_CASE("a device's turn goes to the earliest-ready action, and it names what released it") {
  // Four ranks on one device: each action starts when the device frees (it never idles, see
  // above), and what released it ended right then: its input, or the action run before it.
  const Schedule s = synthesize("ZBH1", {4, 8});
  const std::vector<std::uint32_t> one(4, 0);
  const Timeline t = simulate_timed(s, s.placement.stage_to_rank, options(s, costs(1, 1.5, 0.5), one));
  std::vector<std::uint32_t> order;
  for (std::uint32_t e = 0; e < t.size(); ++e)
    if (is_busy(t, e)) order.push_back(e);
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return t.start[a] < t.start[b]; });
  for (std::size_t i = 1; i < order.size(); ++i) {
    const std::uint32_t e = order[i], before = order[i - 1];
    REQUIRE(t.start[e] == t.end[before]);
    REQUIRE(t.released_by[e] != Timeline::kNone);
    CHECK(t.end[t.released_by[e]] == t.start[e]);
  }
}

TEST_CASE("sharing changes when actions run, never whether a schedule finishes") {
  const Schedule s = synthesize("1F1B", {4, 8});
  TimedOptions opt = options(s, unit_costs(), {0, 0, 0, 0});
  CHECK(find_stuck(s, s.placement.stage_to_rank, opt).empty());
}
