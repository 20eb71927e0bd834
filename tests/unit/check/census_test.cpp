// The structure proof's census (sim/leaf_census.hpp) stands in for the aggregate simulator's own
// pass over the actions: on every family, lowered or not, on one thread and on two, the numbers
// are those of a run that reads the actions, and the census is really read; a census that does
// not fit the placement is left alone.
#include "check/check.hpp"
#include "check/rules_impl.hpp"
#include "ir/action_text.hpp"
#include "passes/passes.hpp"
#include "sim/aggregate.hpp"
#include "support/catch.hpp"
#include "support/family_schedules.hpp"

using namespace ppsched;

namespace {

void same_with_census(const Schedule& s, const std::vector<std::uint32_t>& placement, const LeafCensus& census,
                      std::size_t mid) {
  TimedOptions opt;
  opt.costs = CostModel::for_pipeline(static_cast<std::uint32_t>(s.rank_count()), s.num_stages);
  const MemoryModel memory;
  AggregateStats read, given;
  const SimAnalysis want = simulate_aggregates_split(s, placement, opt, memory, mid, &read);
  const SimAnalysis got = simulate_aggregates_split(s, placement, opt, memory, mid, &given, &census);
  CHECK_FALSE(read.census);
  CHECK(given.census);
  CHECK(given.two_threads == read.two_threads);
  CHECK(same_aggregates(want, got));
}

}  // namespace

TEST_CASE("the structure proof's census gives the simulator's numbers without its pass over the actions") {
  std::size_t censuses = 0;
  test::for_each_family_schedule(4, {4u, 9u}, [&](const Family& family, std::uint32_t m, const Schedule& s) {
    for (int lowered = 0; lowered < 2; ++lowered) {
      const Schedule x = lowered ? lower_send_recv(s) : s;
      INFO(family.name << " m=" << m << (lowered ? " lowered" : ""));
      const std::vector<std::uint32_t> placement = placement_of(x).stage_to_rank;
      const CheckContext ctx = context_for(x, placement, std::string(family.name));
      const check::CleanProof proof = check::prove_clean(ctx);
      REQUIRE(proof.structural);
      REQUIRE(proof.census);
      ++censuses;
      for (std::size_t mid : {std::size_t{0}, std::size_t{1}, std::size_t{2}})
        same_with_census(x, placement, *proof.census, mid);
      // Another placement than the one the census saw: the run reads the actions itself.
      std::vector<std::uint32_t> other = placement;
      std::swap(other.front(), other.back());
      if (other != placement) {
        TimedOptions opt;
        opt.costs = CostModel::for_pipeline(4, x.num_stages);
        AggregateStats stats;
        try {
          simulate_aggregates(x, other, opt, {}, &stats, proof.census.get());
        } catch (const TimedDeadlock&) {
        }
        CHECK_FALSE(stats.census);
      }
    }
  });
  CHECK(censuses > 10);
}

TEST_CASE("no census when a leaf names a microbatch the proof's grid does not record") {
  // An UNSHARD that names a microbatch: clean, but uncounted by the grid.
  Schedule s = synthesize("1F1B", SynthParams{.ranks = 2, .microbatches = 2});
  const CheckContext clean = context_for(s, placement_of(s).stage_to_rank, "s");
  REQUIRE(check::prove_clean(clean).census);
  s.ranks[0].actions.insert(s.ranks[0].actions.begin(), Action::make(ActionKind::Unshard, 0, 1));
  const CheckContext ctx = context_for(s, placement_of(s).stage_to_rank, "s");
  const check::CleanProof proof = check::prove_clean(ctx);
  CHECK(proof.structural);
  CHECK_FALSE(proof.census);
}

TEST_CASE("the proof sees every SEND and RECV whose other half is missing") {
  std::size_t dropped[kActionKindCount] = {};
  test::for_each_family_schedule(4, {4u}, [&](const Family& family, std::uint32_t, const Schedule& s) {
    const Schedule x = lower_send_recv(s);
    const std::vector<std::uint32_t> placement = placement_of(x).stage_to_rank;
    REQUIRE(check::prove_clean(context_for(x, placement, "s")).comms);
    for (std::size_t r = 0; r < x.rank_count(); ++r)
      for (std::size_t i = 0; i < x.ranks[r].actions.size(); ++i) {
        const Action a = x.ranks[r].actions[i];
        if (!is_send_recv(a.kind)) continue;
        INFO(family.name << ": without rank " << r << "'s " << action_text(a, x.sub_actions));
        Schedule y = x;
        y.ranks[r].actions.erase(y.ranks[r].actions.begin() + static_cast<std::ptrdiff_t>(i));
        const check::CleanProof proof = check::prove_clean(context_for(y, placement, "s"));
        CHECK_FALSE(proof.comms);
        CHECK_FALSE(proof.census);
        ++dropped[static_cast<std::size_t>(a.kind)];
      }
  });
  for (ActionKind k : {ActionKind::SendF, ActionKind::RecvF, ActionKind::SendB, ActionKind::RecvB})
    CHECK(dropped[static_cast<std::size_t>(k)] > 0);
}
