// The measured run put together (trace/trace_analysis.hpp): clocks aligned on SEND/RECV pairs,
// costs, iteration time and idle, on two ranks written here with known offsets.
#include "trace/trace_analysis.hpp"

#include "ir/user_error.hpp"
#include "support/catch.hpp"

using namespace ppsched;

namespace {

MeasuredAction act(ActionKind k, std::uint16_t stage, std::uint32_t mb, double cpu, double g0, double g1,
                   std::uint32_t step = 0) {
  MeasuredAction a;
  a.action = Action::make(k, stage, mb);
  a.step = step;
  a.cpu_start = cpu;
  a.cpu_end = cpu + 1;
  a.gpu_start = g0;
  a.gpu_end = g1;
  a.gpu_busy = g1 - g0;
  a.has_gpu = true;
  return a;
}

// Two ranks, one stage each, one microbatch. True times: rank 0 F [0,10], send [10,13]; rank 1
// recv [2,13], F [13,23], I [23,43]... Rank 1's clock reads 500 more than rank 0's.
std::vector<MeasuredRank> two_ranks() {
  MeasuredRank r0, r1;
  r0.file = "r0.json", r1.file = "r1.json";
  r0.rank = 0, r1.rank = 1;
  r0.world_size = r1.world_size = 2;
  r0.steps = {{5, -10, 200}};
  r1.steps = {{5, 490, 700}};
  const double off = 500;
  r0.actions = {act(ActionKind::F, 0, 0, 0, 0, 10), act(ActionKind::SendF, 0, 0, 9, 10, 13),
                act(ActionKind::RecvB, 0, 0, 11, 12, 45), act(ActionKind::I, 0, 0, 12, 45, 60)};
  r1.actions = {
      act(ActionKind::RecvF, 1, 0, off + 1, off + 2, off + 13), act(ActionKind::F, 1, 0, off + 2, off + 13, off + 23),
      act(ActionKind::I, 1, 0, off + 3, off + 23, off + 40), act(ActionKind::SendB, 1, 0, off + 4, off + 40, off + 45)};
  return {r1, r0};  // any order
}

}  // namespace

TEST_CASE("trace analysis: offsets from SEND/RECV pairs, then costs, transfers and the iteration") {
  const TraceAnalysis a = analyze_traces(two_ranks());
  REQUIRE(a.ranks.size() == 2);
  CHECK(a.ranks[0].rank == 0);
  CHECK(a.pairs.size() == 2);
  CHECK(a.clock_offset_us[1] == Approx(500));
  CHECK(a.iteration_us.size() == 1);
  CHECK(a.median_iteration_us == Approx(60));  // rank 0's F at 0 to its I's end at 60
  // Transfers: F's activation from max(10, 2) to 13; I's gradient from max(40, 12) to 45.
  REQUIRE(a.hops.size() == 2);
  CHECK(a.hops[0].from == 0);
  CHECK(a.hops[0].median_us == Approx(3));
  CHECK(a.hops[1].from == 1);
  CHECK(a.hops[1].median_us == Approx(5));
  // Costs per stage and kind.
  REQUIRE(a.costs.size() == 4);
  CHECK(a.costs[0].stage == 0);
  CHECK(a.costs[0].kind == ActionKind::F);
  CHECK(a.costs[0].median_us == Approx(10));
  // Rank 0 waited for the gradient: its F ends at 10, its I starts at 45 as the RECV_B completes.
  CHECK(a.idle[0].receive_wait_us == Approx(35));
  CHECK(a.idle[0].busy_us == Approx(25));
  // The executed order, and as a cost model B = I + W where only I was measured.
  CHECK(a.executed.ranks[1].actions.size() == 4);
  const CostModel m = measured_cost_model(a, 2);
  CHECK(m.cost(1, ActionKind::I) == Approx(17));
  CHECK(compute_only(a.executed).ranks[0].actions.size() == 2);
}

TEST_CASE("trace analysis: ranks that disagree or miss a step are refused, naming the file") {
  auto ranks = two_ranks();
  ranks[0].world_size = 3;
  CHECK_THROWS_WITH(analyze_traces(ranks), Catch::Contains("r1.json says the world holds 3 ranks"));
  ranks = two_ranks();
  ranks[0].steps.push_back({6, 800, 900});
  CHECK_THROWS_WITH(analyze_traces(ranks), Catch::Contains("r1.json profiled ProfilerStep#6"));
  ranks = two_ranks();
  ranks.pop_back();
  CHECK_THROWS_WITH(analyze_traces(ranks), Catch::Contains("no trace of rank 0"));
  ranks = two_ranks();
  ranks[0].rank = 0;
  CHECK_THROWS_WITH(analyze_traces(ranks), Catch::Contains("are both rank 0"));
}
