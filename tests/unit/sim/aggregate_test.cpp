// simulate_aggregates against the Timeline path it replaces: analyze(simulate_timed(...)) must
// give the same numbers, bit for bit, on every family, lowered or not, with uneven costs, a
// topology, blocking comms, a stage spec's memory sizes and a fixed memory term; and the ring
// must really be used (no silent fallback) on well-formed schedules.
#include "sim/aggregate.hpp"

#include <random>

#include "passes/passes.hpp"
#include "sim/analysis.hpp"
#include "sim/timed.hpp"
#include "support/catch.hpp"
#include "support/family_schedules.hpp"
#include "synth/synth.hpp"

using namespace ppsched;

namespace {

void require_same(const SimAnalysis& want, const SimAnalysis& got) {
  CHECK(got.makespan == want.makespan);
  CHECK(got.bubble_global == want.bubble_global);
  CHECK(got.bubble_per_stage == want.bubble_per_stage);
  CHECK(got.memory.in_bytes == want.memory.in_bytes);
  REQUIRE(got.ranks.size() == want.ranks.size());
  for (std::size_t r = 0; r < want.ranks.size(); ++r) {
    INFO("rank " << r);
    const RankUsage &w = want.ranks[r], &g = got.ranks[r];
    CHECK(g.busy == w.busy);
    CHECK(g.first_start == w.first_start);
    CHECK(g.last_end == w.last_end);
    CHECK(g.warmup == w.warmup);
    CHECK(g.cooldown == w.cooldown);
    CHECK(g.dependency_wait == w.dependency_wait);
    CHECK(g.comm_wait == w.comm_wait);
    CHECK(got.memory.peak[r] == want.memory.peak[r]);
    CHECK(got.memory.peak_time[r] == want.memory.peak_time[r]);
  }
}

struct Setup {
  TimedOptions opt;
  MemoryModel memory;
};

// Uneven per-stage costs, a two-slice topology with per-stage message sizes, and per-stage
// memory sizes: everything the aggregates depend on, varied with `seed`.
Setup uneven(const Schedule& s, unsigned seed, bool blocking) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> cost(0.25, 3.0), bytes(1e3, 1e6);
  Setup out;
  out.opt.blocking_comms = blocking;
  out.opt.costs.overlap_factor = 0.75;
  out.opt.costs.per_stage.assign(s.num_stages, unit_costs());
  for (auto& k : out.opt.costs.per_stage)
    for (ActionKind kind : {ActionKind::F, ActionKind::I, ActionKind::W, ActionKind::B, ActionKind::SendF})
      k[static_cast<std::size_t>(kind)] = cost(rng);
  Topology topo;
  const auto R = static_cast<std::uint32_t>(s.rank_count());
  for (std::uint32_t r = 0; r < R; ++r) {
    topo.node_of_rank.push_back(r / 2);
    topo.slice_of_rank.push_back(r / 4);
  }
  topo.intra_node = {0.01, 1e6};
  topo.inter_node = {0.1, 1e5};
  topo.inter_slice = {1.5, 2e4};
  out.opt.comm.topology = topo;
  out.opt.comm.stages.resize(s.num_stages);
  for (auto& st : out.opt.comm.stages) {
    st.activation_bytes = bytes(rng);
    st.gradient_bytes = bytes(rng);
  }
  for (std::uint32_t st = 0; st < s.num_stages; ++st) {
    out.memory.activation.push_back(bytes(rng));
    out.memory.weight_grad.push_back(out.memory.activation.back() * 0.4);
  }
  out.memory.fixed_per_rank.assign(R, 5e5);
  out.memory.in_bytes = true;
  return out;
}

void compare(const Schedule& s, const Setup& setup) {
  SimAnalysis want = analyze(s, simulate_timed(s, s.placement.stage_to_rank, setup.opt), setup.memory);
  AggregateStats stats;
  SimAnalysis got = simulate_aggregates(s, s.placement.stage_to_rank, setup.opt, setup.memory, &stats);
  CHECK_FALSE(stats.fell_back);
  require_same(want, got);
  CHECK(got.memory.per_rank.size() == s.rank_count());
}

// f(schedule, unit costs, m, lowered) for every family at 4 ranks and 4, 8 and 13 microbatches, as
// synthesized and lowered with send/recv.
template <class F>
void for_each_family_both_ways(F&& f) {
  test::for_each_family_schedule(4, {4u, 8u, 13u}, [&](const Family& family, std::uint32_t m, const Schedule& s) {
    for (int lowered = 0; lowered < 2; ++lowered) {
      const Schedule keep = lowered ? lower_send_recv(s) : s;
      INFO(family.name << " m=" << m << (lowered ? " lowered" : ""));
      Setup unit;
      unit.opt.costs = CostModel::uniform(keep.num_stages, keep.num_stages / 4, unit_costs());
      f(keep, unit, m, lowered != 0);
    }
  });
}

}  // namespace

TEST_CASE("aggregates equal analyze(simulate_timed) on every family, with unit and uneven inputs") {
  for_each_family_both_ways([](const Schedule& keep, const Setup& unit, std::uint32_t m, bool lowered) {
    compare(keep, unit);
    for (bool blocking : {false, true}) {
      INFO("blocking " << blocking);
      compare(keep, uneven(keep, m * 7 + static_cast<unsigned>(lowered), blocking));
    }
  });
}

// Eager sends change who waits for whom (a SEND no longer waits for its RECV; a RECV may find its
// data already there): the ring run keeps each eager send's arrival for its RECV and must still
// give the Timeline path's numbers, with every send eager or only those under a threshold (the
// uneven setup's messages are 1e3 to 1e6 bytes, so 5e5 splits them), with blocking comms too.
TEST_CASE("aggregates equal analyze(simulate_timed) under eager sends, on every family") {
  const SendMode modes[] = {SendMode{SendMode::Kind::Eager}, SendMode{SendMode::Kind::Eager, 5e5}};
  test::for_each_family_schedule(4, {4u, 8u, 13u}, [&](const Family& family, std::uint32_t m, const Schedule& s) {
    Schedule keep = lower_send_recv(s);
    for (const SendMode& mode : modes) {
      INFO(family.name << " m=" << m << " " << send_mode_name(mode));
      Setup unit;
      unit.opt.costs = CostModel::uniform(keep.num_stages, keep.num_stages / 4, unit_costs());
      unit.opt.send = mode;
      compare(keep, unit);
      for (bool blocking : {false, true}) {
        INFO("blocking " << blocking);
        Setup setup = uneven(keep, m * 11, blocking);
        setup.opt.send = mode;
        compare(keep, setup);
      }
    }
  });
}

// A RECV that a rank posts only after a SEND it depends on (defer_pp_recv's order in
// pytorch/pytorch#172668): both runs deadlock under rendezvous and finish, with the same numbers,
// once the sends are eager.
namespace {

// 1F1B over 4 ranks and 8 microbatches, lowered, with the last rank's receive of F1 moved behind its
// send of B0's gradient (that rank's F1 comes after its B0); rank 2 sends F1 before it receives
// that gradient.
Schedule deferred_receive() {
  SynthParams p;
  p.ranks = 4;
  p.microbatches = 8;
  Schedule s = lower_send_recv(synthesize("1F1B", p));
  auto& a = s.ranks[3].actions;
  auto recv = std::find(a.begin(), a.end(), Action::make(ActionKind::RecvF, 3, 1));
  auto send = std::find(a.begin(), a.end(), Action::make(ActionKind::SendB, 3, 0));
  REQUIRE((recv != a.end() && send != a.end() && recv < send));
  std::rotate(recv, recv + 1, send + 1);
  return s;
}

}  // namespace

TEST_CASE("aggregates: a deferred receive deadlocks under rendezvous and agrees under eager") {
  Schedule s = deferred_receive();
  Setup setup = uneven(s, 3, false);
  CHECK_THROWS_AS(simulate_aggregates(s, s.placement.stage_to_rank, setup.opt, setup.memory), TimedDeadlock);
  setup.opt.send = SendMode{SendMode::Kind::Eager};
  compare(s, setup);
  setup.opt.send = SendMode{SendMode::Kind::Eager, 0};  // every message is over 0 bytes: rendezvous again
  CHECK_THROWS_AS(simulate_aggregates(s, s.placement.stage_to_rank, setup.opt, setup.memory), TimedDeadlock);
}

// With a zero-cost compute action, an allocation and a free can fall at the same instant in the
// other order than the program's, so the memory events must go through the sorted pending list.
TEST_CASE("aggregates equal analyze(simulate_timed) when some compute costs are zero") {
  test::for_each_family_schedule(4, {5u}, [](const Family& family, std::uint32_t m, const Schedule& s) {
    for (int lowered = 0; lowered < 2; ++lowered) {
      Schedule keep = lowered ? lower_send_recv(s) : s;
      INFO(family.name << " m=" << m << (lowered ? " lowered" : ""));
      Setup setup = uneven(keep, m, false);
      setup.opt.comm.topology.reset();
      for (std::size_t st = 0; st < setup.opt.costs.per_stage.size(); st += 2)
        for (ActionKind kind : {ActionKind::F, ActionKind::W, ActionKind::B})
          setup.opt.costs.per_stage[st][static_cast<std::size_t>(kind)] = 0;
      compare(keep, setup);
    }
  });
}

TEST_CASE("aggregates: the ring grows when a schedule keeps many microbatches in flight") {
  SynthParams p;
  p.ranks = 4;
  p.microbatches = 300;  // GPipe: every forward before any backward, so all 300 are live at once
  Schedule s = lower_send_recv(synthesize("GPipe", p));
  Setup setup = uneven(s, 1, false);
  AggregateStats stats;
  SimAnalysis want = analyze(s, simulate_timed(s, s.placement.stage_to_rank, setup.opt), setup.memory);
  SimAnalysis got = simulate_aggregates(s, s.placement.stage_to_rank, setup.opt, setup.memory, &stats);
  CHECK_FALSE(stats.fell_back);
  CHECK(stats.window >= 256);
  require_same(want, got);

  // 1F1B holds about p microbatches: the ring stays small however long the schedule is.
  p.microbatches = 2000;
  Schedule one = lower_send_recv(synthesize("1F1B", p));
  Setup unit;
  unit.opt.costs = CostModel::uniform(one.num_stages, 1, unit_costs());
  got = simulate_aggregates(one, one.placement.stage_to_rank, unit.opt, unit.memory, &stats);
  CHECK_FALSE(stats.fell_back);
  CHECK(stats.window <= 16);
  CHECK(got.makespan == 3 * 2000 + 3 * (4 - 1));  // 1F1B: m (F + B) + (p - 1)(F + B)
  require_same(analyze(one, simulate_timed(one, one.placement.stage_to_rank, unit.opt), unit.memory), got);
}

TEST_CASE("aggregates: a duplicated action falls back and still agrees, and a deadlock throws") {
  SynthParams p;
  p.ranks = 2;
  p.microbatches = 4;
  Schedule s = synthesize("1F1B", p);
  s.ranks[0].actions.push_back(s.ranks[0].actions.front());  // F0 twice on rank 0
  Setup unit;
  unit.opt.costs = CostModel::uniform(s.num_stages, 1, unit_costs());
  AggregateStats stats;
  SimAnalysis want = analyze(s, simulate_timed(s, s.placement.stage_to_rank, unit.opt), unit.memory);
  SimAnalysis got = simulate_aggregates(s, s.placement.stage_to_rank, unit.opt, unit.memory, &stats);
  CHECK(stats.fell_back);
  require_same(want, got);

  Schedule lowered = lower_send_recv(synthesize("1F1B", p));
  auto& r1 = lowered.ranks[1].actions;
  r1.erase(std::find_if(r1.begin(), r1.end(), [](const Action& a) { return a.kind == ActionKind::RecvF; }));
  CHECK_THROWS_AS(simulate_aggregates(lowered, lowered.placement.stage_to_rank, unit.opt, unit.memory), TimedDeadlock);
}

// Idle time before a compute action released by a RECV: only the time its posted transfer takes
// counts as transfer; waiting for the SEND to be posted is a dependency. 1F1B on 4 ranks and 8
// microbatches, lowered, unit costs: with free transfers every one of its 18 idle units waits for a
// dependency (as the compute-only schedule's implicit comms say); with a 0.5 us link between ranks
// part of it is transfer. The Timeline path and the aggregates agree on both.
TEST_CASE("a free transfer adds no transfer idle time: waiting for an unposted SEND is a dependency") {
  SynthParams params;
  params.ranks = 4;
  params.microbatches = 8;
  const Schedule s = lower_send_recv(synthesize("1F1B", params));
  TimedOptions opt;
  opt.costs = CostModel::uniform(4, 1, unit_costs());
  auto totals = [&](const SimAnalysis& a) {
    double dependency = 0, transfer = 0;
    for (const RankUsage& u : a.ranks) dependency += u.dependency_wait, transfer += u.comm_wait;
    return std::pair{dependency, transfer};
  };
  const SimAnalysis free_timed = analyze(s, simulate_timed(s, s.placement.stage_to_rank, opt), {});
  require_same(free_timed, simulate_aggregates(s, s.placement.stage_to_rank, opt, {}));
  CHECK(totals(free_timed) == std::pair{18.0, 0.0});
  Topology topo;
  topo.node_of_rank = {0, 1, 2, 3};
  topo.inter_node = {0.5, 1e12};
  opt.comm.topology = topo;
  const SimAnalysis costly = analyze(s, simulate_timed(s, s.placement.stage_to_rank, opt), {});
  require_same(costly, simulate_aggregates(s, s.placement.stage_to_rank, opt, {}));
  CHECK(totals(costly).second > 0);
  CHECK(totals(costly).first > 0);
}

namespace {

bool has_containers(const Schedule& s) {
  for (const auto& r : s.ranks)
    for (const Action& a : r.actions)
      if (a.is_container()) return true;
  return false;
}

// The run split between two threads at `mid` against the Timeline path. Two threads take the run
// when it has no container and its comms are rendezvous and do not block; otherwise one thread
// runs it, with the same answer.
void compare_split(const Schedule& s, const Setup& setup, std::size_t mid) {
  INFO("split at rank " << mid);
  SimAnalysis want = analyze(s, simulate_timed(s, s.placement.stage_to_rank, setup.opt), setup.memory);
  AggregateStats stats;
  SimAnalysis got = simulate_aggregates_split(s, s.placement.stage_to_rank, setup.opt, setup.memory, mid, &stats);
  CHECK_FALSE(stats.fell_back);
  CHECK(stats.two_threads == (!has_containers(s) && !setup.opt.blocking_comms && !setup.opt.send.eager()));
  require_same(want, got);
}

}  // namespace

// Each half of the ranks on its own thread, meeting the other half at every SEND/RECV pair (or,
// unlowered, at every compute whose neighbour stage is across) that crosses the split, at every
// split point: the same numbers, bit for bit, as the Timeline path.
TEST_CASE("aggregates on two threads equal analyze(simulate_timed) wherever the ranks split") {
  for_each_family_both_ways([](const Schedule& keep, const Setup& unit, std::uint32_t m, bool lowered) {
    for (std::size_t mid = 1; mid < keep.rank_count(); ++mid) {
      compare_split(keep, unit, mid);
      compare_split(keep, uneven(keep, m * 5 + static_cast<unsigned>(mid), false), mid);
    }
    compare_split(keep, uneven(keep, m, true), 2);  // blocking comms: one thread
    if (lowered) {
      Setup eager = uneven(keep, m, false);
      eager.opt.send = SendMode{SendMode::Kind::Eager};
      compare_split(keep, eager, 2);  // eager sends: one thread
    }
  });
}

// Long schedules, so that the halves hand thousands of pairs back and forth while both run: the
// order in which they meet varies from run to run, the numbers must not.
TEST_CASE("aggregates on two threads: long schedules agree with one thread, run after run") {
  for (const char* family : {"1F1B", "Interleaved1F1B", "ZBV", "ZB-H1"}) {
    SynthParams p;
    p.ranks = 8;
    p.microbatches = 1024;
    Schedule s;
    try {
      s = synthesize(family, p);
    } catch (const SynthError&) {
      FAIL("cannot synthesize " << family);
    }
    for (int lowered = 0; lowered < 2; ++lowered) {
      Schedule x = lowered ? lower_send_recv(s) : s;
      INFO(family << (lowered ? " lowered" : ""));
      Setup setup = uneven(x, 17, false);
      AggregateStats one;
      SimAnalysis want = simulate_aggregates_split(x, x.placement.stage_to_rank, setup.opt, setup.memory, 0, &one);
      CHECK_FALSE(one.two_threads);
      for (int run = 0; run < 3; ++run) {
        AggregateStats two;
        SimAnalysis got = simulate_aggregates_split(x, x.placement.stage_to_rank, setup.opt, setup.memory, 4, &two);
        CHECK(two.two_threads);
        require_same(want, got);
      }
    }
  }
}

// A half that cannot finish makes the one-thread run decide: a deadlock throws TimedDeadlock (it
// names the stuck actions) wherever the split falls, and a duplicated action still falls back.
TEST_CASE("aggregates on two threads: deadlocks and duplicated actions give the one-thread answers") {
  const Schedule s = deferred_receive();
  Setup setup = uneven(s, 3, false);
  for (std::size_t mid = 1; mid < 4; ++mid) {
    INFO("split at rank " << mid);
    CHECK_THROWS_AS(simulate_aggregates_split(s, s.placement.stage_to_rank, setup.opt, setup.memory, mid),
                    TimedDeadlock);
  }

  SynthParams p;
  p.ranks = 4;
  p.microbatches = 8;
  Schedule dropped = lower_send_recv(synthesize("1F1B", p));
  auto& r2 = dropped.ranks[2].actions;  // rank 2 never receives F3: ranks 0-1 and 2-3 both wait
  r2.erase(std::find(r2.begin(), r2.end(), Action::make(ActionKind::RecvF, 2, 3)));
  for (std::size_t mid = 1; mid < 4; ++mid) {
    INFO("split at rank " << mid);
    CHECK_THROWS_AS(simulate_aggregates_split(dropped, dropped.placement.stage_to_rank, setup.opt, setup.memory, mid),
                    TimedDeadlock);
  }

  Schedule twice = lower_send_recv(synthesize("1F1B", p));
  twice.ranks[1].actions.push_back(Action::make(ActionKind::SendF, 1, 7));  // a second SEND of F7 to rank 2
  SimAnalysis want;
  bool want_deadlock = false;
  try {
    want = analyze(twice, simulate_timed(twice, twice.placement.stage_to_rank, setup.opt), setup.memory);
  } catch (const TimedDeadlock&) {
    want_deadlock = true;
  }
  for (std::size_t mid = 1; mid < 4; ++mid) {
    INFO("split at rank " << mid);
    if (want_deadlock) {
      CHECK_THROWS_AS(simulate_aggregates_split(twice, twice.placement.stage_to_rank, setup.opt, setup.memory, mid),
                      TimedDeadlock);
    } else {
      AggregateStats stats;
      require_same(
          want, simulate_aggregates_split(twice, twice.placement.stage_to_rank, setup.opt, setup.memory, mid, &stats));
      CHECK_FALSE(stats.two_threads);
    }
  }
}
