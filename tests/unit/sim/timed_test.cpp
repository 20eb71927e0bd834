// The timed simulator against results known in closed form: the unit-cost makespans and
// the Zero Bubble paper's Table 2 bubbles with random costs.
#include "sim/timed.hpp"

#include <algorithm>
#include <random>

#include "passes/passes.hpp"
#include "sim/memory.hpp"
#include "support/catch.hpp"
#include "synth/synth.hpp"

using namespace ppsched;

namespace {

Schedule make(const char* family, std::uint32_t p, std::uint32_t m) {
  SynthParams params;
  params.ranks = p;
  params.microbatches = m;
  return synthesize(family, params);
}

Timeline run(const Schedule& s, const KindCosts& per_rank = unit_costs()) {
  TimedOptions opt;
  std::uint32_t v = s.num_stages / static_cast<std::uint32_t>(s.rank_count());
  opt.costs = CostModel::uniform(s.num_stages, v, per_rank);
  return simulate_timed(s, s.placement.stage_to_rank, opt);
}

// Per-stage bubble in the paper's sense: the longest stage span minus one stage's compute.
double stage_bubble(const Schedule& s, const Timeline& t, double compute_per_rank) {
  double span = 0;
  for (std::size_t r = 0; r < t.rank_count(); ++r) {
    double first = 1e300, last = 0;
    for (std::uint32_t e = t.rank_begin[r]; e < t.rank_begin[r + 1]; ++e) {
      if (t.end[e] == t.start[e]) continue;  // zero-cost bookkeeping (REDUCE_GRAD)
      first = std::min(first, t.start[e]);
      last = std::max(last, t.end[e]);
    }
    span = std::max(span, last - first);
  }
  (void)s;
  return span - compute_per_rank;
}

KindCosts costs(double f, double i, double w) {
  KindCosts c = unit_costs();
  c[static_cast<std::size_t>(ActionKind::F)] = f;
  c[static_cast<std::size_t>(ActionKind::I)] = i;
  c[static_cast<std::size_t>(ActionKind::W)] = w;
  c[static_cast<std::size_t>(ActionKind::B)] = i + w;
  return c;
}

}  // namespace

TEST_CASE("unit-cost makespans, p = 4 (issue 6)") {
  CHECK(run(make("GPipe", 4, 4)).makespan == 21);
  CHECK(run(make("1F1B", 4, 4)).makespan == 21);
  CHECK(run(make("ZB-H1", 4, 4)).makespan == 15);
  // The issue lists 13.5 (= 3m + (p-1)/2, ideal ZB-V). PyTorch's ZBV order, which ppsched emits
  // byte for byte, is generated for 2p-1 microbatches and blanked above m, and with m = 4 < 2p-1
  // it reaches 15; from m = 2p-1 on it is ideal (m = 8 below: 25.5).
  CHECK(run(make("ZBV", 4, 4)).makespan == 15);
  CHECK(run(make("1F1B", 4, 8)).makespan == 33);
  CHECK(run(make("ZB-H1", 4, 8)).makespan == 27);
  Schedule h2 = make("ZB-H2", 4, 8);
  Timeline t = run(h2);
  CHECK(t.makespan == 27);
  CHECK(stage_bubble(h2, t, 24) == 0);  // per-stage span 24 = 3m: no bubble
  CHECK(run(make("ZBV", 4, 8)).makespan == 25.5);
}

TEST_CASE("with free comms, lowering only adds the order of the receive stream") {
  // One neighbour each way: the receives arrive in the order they are needed, so explicit
  // SEND/RECV with zero transfer time changes nothing.
  for (const char* family : {"1F1B", "GPipe", "ZB-H1"}) {
    INFO(family);
    Schedule s = make(family, 4, 8);
    CHECK(run(lower_send_recv(s)).makespan == run(s).makespan);
  }
  // A V schedule receives from both neighbours on one in-order stream, so a receive can queue
  // behind one that is needed later: never faster than the implicit model.
  for (const char* family : {"ZBV", "DualPipeV"}) {
    INFO(family);
    Schedule s = make(family, 4, 8);
    CHECK(run(lower_send_recv(s)).makespan >= run(s).makespan);
  }
}

TEST_CASE("Zero Bubble paper, Table 2: bubbles with random costs, p in 2..16") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> cost(0.5, 2.0);
  for (std::uint32_t p = 2; p <= 16; ++p) {
    for (int trial = 0; trial < 3; ++trial) {
      double f = cost(rng), i = cost(rng), w = cost(rng);
      if (w > f) std::swap(w, f);  // ZB-H2's bound needs T_W <= T_F
      std::uint32_t m = p + static_cast<std::uint32_t>(rng() % (3 * p + 1));
      INFO("p=" << p << " m=" << m << " F=" << f << " I=" << i << " W=" << w);
      double compute = m * (f + i + w);
      KindCosts c = costs(f, i, w);
      CHECK(stage_bubble({}, run(make("1F1B", p, m), c), compute) == Approx((p - 1) * (f + i + w)).margin(1e-9));
      CHECK(stage_bubble({}, run(make("ZB-H1", p, m), c), compute) <= Approx((p - 1) * (f + i - w)).margin(1e-9));
      if (m >= 2 * p)
        CHECK(stage_bubble({}, run(make("ZB-H2", p, m), c), compute) <=
              Approx(std::max(0.0, (p - 1) * (f + i - 2 * w))).margin(1e-9));
    }
  }
}

TEST_CASE("a dropped receive is a deadlock that names the stuck rank") {
  Schedule s = lower_send_recv(make("1F1B", 2, 2));
  auto& r1 = s.ranks[1].actions;
  r1.erase(r1.begin());  // 1RECV_F0
  try {
    run(s);
    FAIL("no deadlock");
  } catch (const TimedDeadlock& d) {
    REQUIRE_FALSE(d.stuck().empty());
    CHECK(d.stuck()[0].rank == 0);
  }
}

TEST_CASE("a duplicated send or receive waits for good: a deadlock, not a second pairing of its partner") {
  for (ActionKind kind : {ActionKind::SendF, ActionKind::RecvF}) {
    INFO(std::string(kind_name(kind)));
    Schedule s = lower_send_recv(make("1F1B", 2, 2));
    const std::uint32_t rank = kind == ActionKind::SendF ? 0 : 1;
    auto& actions = s.ranks[rank].actions;
    auto first = std::find_if(actions.begin(), actions.end(), [&](const Action& a) { return a.kind == kind; });
    REQUIRE(first != actions.end());
    actions.insert(first + 1, *first);
    try {
      run(s);
      FAIL("no deadlock");
    } catch (const TimedDeadlock& d) {
      REQUIRE_FALSE(d.stuck().empty());
      bool duplicate_stuck = false;
      for (const auto& st : d.stuck()) duplicate_stuck |= st.rank == rank && actions[st.step].kind == kind;
      CHECK(duplicate_stuck);
    }
  }
}

TEST_CASE("peak memory in microbatches: 1F1B and ZB-H1 p, ZB-H2 2p-1, ZBV p") {
  for (std::uint32_t p = 2; p <= 8; ++p) {
    std::uint32_t m = 3 * p;
    INFO("p=" << p);
    auto peak = [&](const char* family) {
      Schedule s = make(family, p, m);
      return compute_memory(s, run(s), {}).max_peak();
    };
    CHECK(peak("1F1B") == Approx(p));
    CHECK(peak("ZB-H1") == Approx(p));
    CHECK(peak("ZB-H2") == Approx(2 * p - 1));
    CHECK(peak("ZBV") == Approx(p));
  }
}
