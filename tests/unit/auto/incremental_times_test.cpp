// The local search's incremental timeline against the timed simulator: after any sequence of
// moves (kept or undone) every action's start and end are the simulator's, bit for bit, and a
// move is refused exactly when the simulator finds the schedule stuck; a move stopped early
// bounds every rank's end from below.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "auto/auto_schedule.hpp"
#include "auto/greedy.hpp"
#include "auto/incremental_times.hpp"
#include "auto/shape.hpp"
#include "auto/variants.hpp"
#include "sim/aggregate.hpp"
#include "sim/memory.hpp"
#include "sim/timed.hpp"
#include "support/catch.hpp"
#include "support/random_pipeline.hpp"
#include "synth/synth.hpp"

using namespace ppsched;
using auto_detail::GreedyPolicy;
using auto_detail::IncrementalTimes;

namespace {

// Whether `times` holds the simulator's times of `s`, or (nullopt) the simulator finds it stuck.
void require_simulator_times(const IncrementalTimes& times, const Schedule& s, const AutoParams& a) {
  const Timeline t = simulate_timed(s, s.placement.stage_to_rank, a.sim);
  for (std::uint32_t r = 0; r < a.ranks; ++r)
    for (std::uint32_t e = t.rank_begin[r]; e < t.rank_begin[r + 1]; ++e) {
      REQUIRE(times.start(r, t.step[e]) == t.start[e]);
      REQUIRE(times.end(r, t.step[e]) == t.end[e]);
    }
}

// A random pipeline (2-7 ranks, p to 3p-1 microbatches, v chunks) in `a`, and its schedule of
// `family`.
Schedule random_schedule(std::mt19937& rng, std::uint32_t v, const char* family, AutoParams& a) {
  const std::uint32_t p = 2 + rng() % 6, m = p + rng() % (2 * p);
  a = test::random_pipeline(rng, p, m, v);
  SynthParams sp;
  sp.ranks = p;
  sp.microbatches = m;
  return synthesize(family, sp);
}

// Where a random move of the action at `from` goes: up to 6 places either way, as far as the local
// search reaches, within a program of n actions.
std::size_t random_target(std::mt19937& rng, std::size_t from, std::size_t n) {
  const std::ptrdiff_t reach = static_cast<std::ptrdiff_t>(rng() % 13) - 6;
  return static_cast<std::size_t>(
      std::clamp<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(from) + reach, 0, static_cast<std::ptrdiff_t>(n) - 1));
}

// Whether the greedy can replay `s`: F, I and W only, each stage's of each kind in microbatch order
// (the greedy keeps one counter per stage and kind; a local search's moves can break that order).
bool greedy_replays(const Schedule& s) {
  std::vector<std::array<std::int64_t, 3>> next(s.num_stages, {0, 0, 0});
  for (const RankProgram& rank : s.ranks)
    for (const Action& x : rank.actions) {
      if (x.is_idle()) continue;
      const int k = x.kind == ActionKind::F ? 0 : x.kind == ActionKind::I ? 1 : x.kind == ActionKind::W ? 2 : -1;
      if (k < 0 || x.microbatch() != next[x.stage][k]) return false;
      ++next[x.stage][k];
    }
  return true;
}

bool simulator_finishes(const Schedule& s, const AutoParams& a) {
  return find_stuck(s, s.placement.stage_to_rank, a.sim).empty();
}

}  // namespace

TEST_CASE("moves keep the incremental timeline equal to the timed simulator's, and a stuck move is refused") {
  std::mt19937 rng(2026);
  int stuck = 0, kept = 0, stopped_early = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const std::uint32_t v = 1 + trial % 2;
    const char* family = v == 2 ? "ZBVZeroBubble" : (trial % 4 == 0 ? "1F1B" : "ZBH1");
    AutoParams a;
    Schedule s = random_schedule(rng, v, family, a);
    const std::uint32_t p = a.ranks;
    INFO("trial " << trial << " " << family << " p=" << p << " m=" << a.microbatches);
    std::optional<IncrementalTimes> times = IncrementalTimes::of(s, a);
    REQUIRE(times);
    require_simulator_times(*times, s, a);
    for (int step = 0; step < 200; ++step) {
      const std::uint32_t r = rng() % p;
      const std::size_t n = s.ranks[r].actions.size();
      const std::size_t from = rng() % n, to = random_target(rng, from, n);
      if (from == to) continue;
      const Schedule before = s;
      // Half the moves stop early where they can, and are then completed: the same times.
      IncrementalTimes::Retimed how = times->move(r, from, to, rng() % 2 == 0);
      if (how == IncrementalTimes::Retimed::NothingSooner) {
        ++stopped_early;
        std::vector<double> bound;
        for (std::uint32_t q = 0; q < p; ++q) bound.push_back(times->last_end(q));
        how = times->finish();
        for (std::uint32_t q = 0; q < p && how == IncrementalTimes::Retimed::Done; ++q)
          REQUIRE(times->last_end(q) >= bound[q]);  // the bound the local search reads
      }
      const bool finishes = how == IncrementalTimes::Retimed::Done;
      REQUIRE(finishes == simulator_finishes(s, a));
      if (finishes) require_simulator_times(*times, s, a);
      if (!finishes || rng() % 2 == 0) {
        times->undo();
        REQUIRE(s.ranks[r].actions == before.ranks[r].actions);
        require_simulator_times(*times, s, a);
        stuck += finishes ? 0 : 1;
      } else {
        ++kept;
      }
    }
  }
  CHECK(stuck > 20);  // the trials reach every outcome
  CHECK(kept > 500);
  CHECK(stopped_early > 200);
}

TEST_CASE("the incremental timeline's peak is the simulator's peak of the moved rank") {
  std::mt19937 rng(5);
  const AutoParams a = test::random_pipeline(rng, 4, 10, 2);
  SynthParams sp;
  sp.ranks = 4;
  sp.microbatches = 10;
  Schedule s = synthesize("ZBVZeroBubble", sp);
  std::optional<IncrementalTimes> times = IncrementalTimes::of(s, a);
  REQUIRE(times);
  for (std::size_t from = 0; from < s.ranks[1].actions.size(); ++from)
    for (std::size_t to = from > 3 ? from - 3 : 0; to < std::min(from + 4, s.ranks[1].actions.size()); ++to) {
      const double predicted = times->peak_if_moved(1, from, to);
      if (times->move(1, from, to) != IncrementalTimes::Retimed::Done) {
        times->undo();
        continue;
      }
      const Timeline t = simulate_timed(s, s.placement.stage_to_rank, a.sim);
      CHECK(predicted == compute_memory(s, t, a.memory).peak[1]);
      times->undo();
    }
}

TEST_CASE("after moves kept and undone, the predicted peak of any move is the simulator's peak") {
  std::mt19937 rng(41);
  int checked = 0;
  for (int trial = 0; trial < 12; ++trial) {
    const std::uint32_t v = 1 + trial % 2;
    AutoParams a;
    Schedule s = random_schedule(rng, v, v == 2 ? "ZBVZeroBubble" : "ZBH1", a);
    INFO("trial " << trial << " p=" << a.ranks << " m=" << a.microbatches);
    std::optional<IncrementalTimes> times = IncrementalTimes::of(s, a);
    REQUIRE(times);
    for (int step = 0; step < 120; ++step) {
      const std::uint32_t r = rng() % a.ranks;
      const std::size_t n = s.ranks[r].actions.size();
      const std::size_t from = rng() % n, to = random_target(rng, from, n);
      // The levels it reads are the kept order's: after keep(), after a move kept by the next
      // one, and after undo().
      const double predicted = times->peak_if_moved(r, from, to);
      if (times->move(r, from, to) != IncrementalTimes::Retimed::Done) {
        times->undo();
        continue;
      }
      const Timeline t = simulate_timed(s, s.placement.stage_to_rank, a.sim);
      const double simulated = compute_memory(s, t, a.memory).peak[r];
      REQUIRE(predicted == Approx(simulated).epsilon(1e-12).margin(1e-12));
      ++checked;
      const unsigned what = rng() % 3;
      if (what == 0) times->undo();
      if (what == 1) times->keep();  // else the next move keeps it
    }
  }
  CHECK(checked > 600);
}

TEST_CASE("schedules outside the incremental timeline's model are left to the simulator") {
  std::mt19937 rng(9);
  AutoParams a = test::random_pipeline(rng, 4, 8, 1);
  SynthParams sp;
  sp.ranks = 4;
  sp.microbatches = 8;
  Schedule s = synthesize("ZBH1", sp);
  CHECK(IncrementalTimes::of(s, a));
  AutoParams zero = a;
  zero.sim.costs.per_stage[2][static_cast<std::size_t>(ActionKind::W)] = 0;
  CHECK_FALSE(IncrementalTimes::of(s, zero));  // a zero cost: the peak and a stuck move are not read from order
  AutoParams shared = a;
  shared.sim.device_of_rank = {0, 0, 1, 1};
  CHECK_FALSE(IncrementalTimes::of(s, shared));
  Schedule with_comms = synthesize("ZBH1", sp);
  with_comms.ranks[0].actions.push_back(Action::make(ActionKind::SendF, 0, 0));
  CHECK_FALSE(IncrementalTimes::of(with_comms, a));
}

// The local search skips the moves that can_start_sooner rules out: check that none of them
// lets a rank end sooner, or (when every first start stands too) lets a rank's span shrink.
TEST_CASE(
    "a move that can start nothing sooner ends no rank sooner, and with the first starts standing shrinks no span") {
  std::mt19937 rng(77);
  int ruled_out = 0, gains = 0;
  for (int trial = 0; trial < 16; ++trial) {
    const std::uint32_t v = 1 + trial % 2;
    AutoParams a;
    Schedule s = random_schedule(rng, v, v == 2 ? "ZBVZeroBubble" : "ZBH1", a);
    const std::uint32_t p = a.ranks;
    std::optional<IncrementalTimes> times = IncrementalTimes::of(s, a);
    REQUIRE(times);
    for (int step = 0; step < 300; ++step) {
      const std::uint32_t r = rng() % p;
      const std::size_t n = s.ranks[r].actions.size(), from = rng() % n, to = random_target(rng, from, n);
      if (from == to) continue;
      const bool sooner = times->can_start_sooner(r, from, to), firsts = times->first_starts_stand(r, from, to);
      std::vector<double> end, span;
      for (std::uint32_t q = 0; q < p; ++q) {
        end.push_back(times->last_end(q));
        span.push_back(times->last_end(q) - times->first_start(q));
      }
      const bool finishes = times->move(r, from, to) == IncrementalTimes::Retimed::Done;
      bool ends_sooner = false, shrinks = false;
      for (std::uint32_t q = 0; q < p && finishes; ++q) {
        ends_sooner |= times->last_end(q) < end[q];
        shrinks |= times->last_end(q) - times->first_start(q) < span[q];
      }
      INFO("trial " << trial << " rank " << r << " " << from << " -> " << to);
      if (!sooner) {
        ++ruled_out;
        CHECK_FALSE(ends_sooner);
        if (firsts) CHECK_FALSE(shrinks);
      }
      gains += ends_sooner ? 1 : 0;
      if (rng() % 4 == 0 && finishes) continue;  // keep it: the next moves start from elsewhere
      times->undo();
    }
  }
  CHECK(ruled_out > 1000);  // both outcomes occur
  CHECK(gains > 50);
}

// The timed model is written four times (docs/design.md, "Four places implement the timed model";
// sim/timed.hpp): the reference simulator (timed.cpp), its aggregates without a timeline
// (aggregate.cpp), the greedy, which times what it builds (greedy.cpp), and the local search's
// incremental timeline (incremental_times.cpp). On random pipelines (each stage its own costs, a
// latency and a bandwidth between nodes, bytes per stage), for the families of both chunk counts,
// the automatic schedule and schedules the greedy builds, all four give the same times: every
// action's start and end, each rank's first start and last end, the makespan, the longest rank span
// and the peak. The greedy measures the schedules it builds as it builds them, and replays (with no
// lookahead and no cap: the schedule as it is) those in its model (greedy_replays).
TEST_CASE("the four implementations of the timed model agree on random pipelines, families and auto schedules") {
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> uniform(0.25, 4.0);
  int compared = 0, replayed = 0, built = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const std::uint32_t v = 1 + trial % 2, p = 2 + rng() % 7, m = p + rng() % (2 * p + 1);
    AutoParams a = test::random_pipeline(rng, p, m, v);
    a.sim.comm.topology->inter_node.bytes_per_us = 1e6 * uniform(rng);
    a.sim.comm.topology->intra_node.latency_us = uniform(rng) / 4;
    for (std::uint32_t s = 0; s < p * v; ++s) {
      StageSpec spec;
      spec.activation_bytes = 1e6 * uniform(rng);
      spec.gradient_bytes = 1e6 * uniform(rng);
      a.sim.comm.stages.push_back(spec);
    }
    a.memory_cap = 1.0 + p / 2.0 + rng() % (p + 1);
    const auto_detail::Shape shape(a);
    // The schedules, and the greedy's own measure of those it built.
    struct Case {
      std::string name;
      Schedule schedule;
      std::optional<auto_detail::GreedyRun> built;
    };
    std::vector<Case> cases;
    SynthParams sp;
    sp.ranks = p;
    sp.microbatches = m;
    for (const char* family : v == 1 ? std::vector<const char*>{"ZBH1", "ZBH2", "1F1B"}
                                     : std::vector<const char*>{"ZBVZeroBubble", "VHalf", "VMin"}) {
      try {
        cases.push_back({family, synthesize(family, sp), std::nullopt});
      } catch (const SynthError&) {
      }
    }
    cases.push_back({"auto", auto_schedule(a).schedule, std::nullopt});
    const std::vector<GreedyPolicy> variants = auto_detail::greedy_variants(a, shape);
    for (std::size_t k = 0; k < variants.size(); k += 3) {
      auto_detail::GreedyRun run = auto_detail::greedy_run(shape, variants[k]);
      if (!run.finished) continue;
      Schedule s = auto_detail::schedule_of(a, std::vector<std::vector<Action>>(run.programs));
      cases.push_back({auto_detail::describe(variants[k], v), std::move(s), std::move(run)});
    }
    for (Case& c : cases) {
      const Schedule& s = c.schedule;
      INFO("trial " << trial << " " << c.name << " p=" << p << " m=" << m << " v=" << v);
      ++compared;
      const Timeline t = simulate_timed(s, s.placement.stage_to_rank, a.sim);
      const double peak = compute_memory(s, t, a.memory).max_peak();
      double span = 0;
      // aggregate.cpp
      const SimAnalysis agg = simulate_aggregates(s, s.placement.stage_to_rank, a.sim, a.memory);
      CHECK(agg.makespan == t.makespan);
      CHECK(agg.memory.max_peak() == peak);
      REQUIRE(agg.ranks.size() == p);
      // incremental_times.cpp
      Schedule moved = s;
      const std::optional<IncrementalTimes> times = IncrementalTimes::of(moved, a);
      REQUIRE(times);
      require_simulator_times(*times, s, a);
      double incremental_peak = 0;
      for (std::uint32_t r = 0; r < p; ++r) {
        double first = 1e300, last = 0;
        for (std::uint32_t e = t.rank_begin[r]; e < t.rank_begin[r + 1]; ++e) {
          first = std::min(first, t.start[e]);
          last = std::max(last, t.end[e]);
        }
        span = std::max(span, last - first);
        CHECK(agg.ranks[r].first_action_start == first);
        CHECK(agg.ranks[r].last_action_end == last);
        CHECK(times->first_start(r) == first);
        CHECK(times->last_end(r) == last);
        incremental_peak = std::max(incremental_peak, times->peak_if_moved(r, 0, 0));
      }
      CHECK(incremental_peak == Approx(peak).epsilon(1e-12));
      // greedy.cpp: as it built the schedule, or replaying it as it is
      std::optional<auto_detail::GreedyRun> run = std::move(c.built);
      built += run ? 1 : 0;
      if (!run && greedy_replays(s)) {
        const GreedyPolicy replay{.target_cap = auto_detail::kNever, .guide = &s, .lookahead = 0};
        run = auto_detail::greedy_run(shape, replay);
        ++replayed;
        REQUIRE(run->finished);
        for (std::uint32_t r = 0; r < p; ++r) {
          std::vector<Action> busy;
          for (const Action& x : s.ranks[r].actions)
            if (!x.is_idle()) busy.push_back(x);
          CHECK(run->programs[r] == busy);
        }
      }
      if (!run) continue;
      CHECK(run->makespan == t.makespan);
      CHECK(run->span == span);
      CHECK(run->peak == Approx(peak).epsilon(1e-12));
    }
  }
  CHECK(compared >= 100);
  CHECK(replayed >= 40);
  CHECK(built >= 40);
}
