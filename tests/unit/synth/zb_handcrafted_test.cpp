// ZB-H1 and ZB-H2 meet the Zero Bubble paper's bounds. The makespans are computed here by an
// earliest-start replay written for this test alone (not the simulator): unit costs
// T_F = T_I = T_W = 1, a full backward costs 2, no communication.
#include <algorithm>
#include <map>
#include <tuple>

#include "support/catch.hpp"
#include "synth/synth.hpp"

using namespace ppsched;

namespace {

struct Replay {
  double makespan = 0;
  std::vector<double> span;  // per rank: last end - first start
};

// Each rank runs its program in order; an action starts when its rank is free and what it
// needs has finished: F(s) needs F(s-1); I or B(s) needs F(s) and I/B(s+1) (the last stage
// only F(s)); W(s) needs I(s). Stage s is rank s (one chunk per rank).
Replay replay(const Schedule& s) {
  const std::size_t R = s.ranks.size();
  const std::uint32_t last = s.num_stages - 1;
  std::map<std::tuple<ActionKind, std::uint32_t, std::uint32_t>, double> end;
  auto done = [&](ActionKind k, std::uint32_t st, std::uint32_t mb) -> std::optional<double> {
    auto it = end.find({k, st, mb});
    if (it == end.end()) return std::nullopt;
    return it->second;
  };
  auto backward_done = [&](std::uint32_t st, std::uint32_t mb) -> std::optional<double> {
    if (auto i = done(ActionKind::I, st, mb)) return i;
    return done(ActionKind::B, st, mb);
  };
  std::vector<std::size_t> next(R, 0);
  std::vector<double> free_at(R, 0), first(R, -1);
  Replay out;
  out.span.assign(R, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t r = 0; r < R; ++r) {
      while (next[r] < s.ranks[r].actions.size()) {
        const Action& a = s.ranks[r].actions[next[r]];
        if (a.is_idle()) {
          ++next[r];
          continue;
        }
        std::uint32_t st = a.stage, mb = a.microbatch();
        std::optional<double> ready = 0.0;
        double cost = 1;
        switch (a.kind) {
          case ActionKind::F:
            if (st > 0) ready = done(ActionKind::F, st - 1, mb);
            break;
          case ActionKind::I:
          case ActionKind::B: {
            cost = a.kind == ActionKind::B ? 2 : 1;
            auto f = done(ActionKind::F, st, mb);
            auto down = st == last ? std::optional<double>(0.0) : backward_done(st + 1, mb);
            ready = (f && down) ? std::optional<double>(std::max(*f, *down)) : std::nullopt;
            break;
          }
          case ActionKind::W:
            ready = done(ActionKind::I, st, mb);
            break;
          default:  // REDUCE_GRAD and the like take no compute time here
            cost = 0;
            break;
        }
        if (!ready) break;
        double start = std::max(free_at[r], *ready);
        if (first[r] < 0) first[r] = start;
        free_at[r] = start + cost;
        end[{a.kind, st, mb}] = free_at[r];
        out.makespan = std::max(out.makespan, free_at[r]);
        out.span[r] = free_at[r] - first[r];
        ++next[r];
        progress = true;
      }
    }
  }
  for (std::size_t r = 0; r < R; ++r) REQUIRE(next[r] == s.ranks[r].actions.size());  // no deadlock
  return out;
}

// Most microbatches a rank holds at once: forwards whose weight gradient (W, or B) is pending.
std::uint32_t peak_in_flight(const Schedule& s) {
  std::uint32_t peak = 0;
  for (const auto& rank : s.ranks) {
    std::uint32_t live = 0;
    for (const Action& a : rank.actions) {
      if (a.kind == ActionKind::F) peak = std::max(peak, ++live);
      if (a.kind == ActionKind::W || a.kind == ActionKind::B) --live;
    }
  }
  return peak;
}

Schedule make(const char* family, std::uint32_t p, std::uint32_t m) {
  SynthParams params;
  params.ranks = p;
  params.microbatches = m;
  return synthesize(family, params);
}

}  // namespace

TEST_CASE("unit-cost makespans of the paper's examples (p=4, m=8)") {
  CHECK(replay(make("1F1B", 4, 8)).makespan == 33);
  CHECK(replay(make("ZB-H1", 4, 8)).makespan == 27);
  CHECK(replay(make("ZB-H2", 4, 8)).makespan == 27);
  CHECK(replay(make("ZB-H1", 4, 4)).makespan == 15);
  CHECK(replay(make("GPipe", 4, 4)).makespan == 21);
}

TEST_CASE("ZB-H1 finishes in 3m+p-1 with 1F1B's peak memory") {
  for (std::uint32_t p = 2; p <= 8; ++p)
    for (std::uint32_t m = p; m <= 4 * p; ++m) {
      INFO("p=" << p << " m=" << m);
      Schedule s = make("ZBH1", p, m);
      CHECK(replay(s).makespan == 3 * m + p - 1);
      CHECK(peak_in_flight(s) == std::min(p, m));
      CHECK(peak_in_flight(s) == peak_in_flight(make("1F1B", p, m)));
    }
}

TEST_CASE("ZB-H2 finishes in 3m+p-1, with no bubble per stage once m >= 2p") {
  for (std::uint32_t p = 2; p <= 8; ++p)
    for (std::uint32_t m = p; m <= 4 * p; ++m) {
      INFO("p=" << p << " m=" << m);
      Schedule s = make("ZBH2", p, m);
      Replay r = replay(s);
      CHECK(r.makespan == 3 * m + p - 1);
      CHECK(peak_in_flight(s) <= 2 * p - 1);
      if (m + 2 < 2 * p) CHECK(peak_in_flight(s) == p);  // ZB-H1's shape below 2p-2
      if (m >= 2 * p) {
        CHECK(peak_in_flight(s) == 2 * p - 1);
        for (double span : r.span) CHECK(span == 3 * m);
      }
    }
}
