// activation_liveness beside the rest of the simulator: the byte model that counts its slots
// (slot_memory_model), the same count on a compute-only order and on PyTorch's runtime lowering of
// it, the rank an error is about, and the granularity names. PyTorch's own counts are checked in
// tests/conformance/sim_liveness_cff2ecc8_test.cpp.
#include "sim/activation_liveness.hpp"

#include "parse/pytorch_csv.hpp"
#include "sim/aggregate.hpp"
#include "sim/memory.hpp"
#include "sim/runtime.hpp"
#include "support/catch.hpp"
#include "support/family_schedules.hpp"

using namespace ppsched;

namespace {

std::uint32_t slots(const Schedule& s, LivenessGranularity g) {
  return activation_liveness(s, s.placement.stage_to_rank, stated_microbatches(s), g).peak;
}

}  // namespace

TEST_CASE("slot_memory_model: its sequential peak is PyTorch's stage_microbatch slot count on every family") {
  std::size_t checked = 0;
  test::for_each_family_schedule(4, {4, 8, 12}, [&](const Family& family, std::uint32_t m, const Schedule& s) {
    INFO(family.name << " m=" << m);
    const std::uint32_t stage_microbatch = slots(s, LivenessGranularity::StageMicrobatch);
    const MemoryModel model = slot_memory_model(stated_stages(s));
    CHECK(sequential_peak(s, model) == stage_microbatch);
    // Every action takes time, so the simulated peak is the same (what the automatic search reads).
    TimedOptions opt;
    opt.costs = CostModel::for_pipeline(s.rank_count(), stated_stages(s));
    CHECK(simulate_aggregates(s, s.placement.stage_to_rank, opt, model).memory.max_peak() == stage_microbatch);
    // A microbatch's lifetimes on a rank overlap: one per microbatch never needs more slots.
    CHECK(slots(s, LivenessGranularity::Microbatch) <= stage_microbatch);
    ++checked;
  });
  CHECK(checked >= 30);
}

TEST_CASE("activation_liveness: a compute-only order and PyTorch's runtime lowering of it hold the same slots") {
  std::size_t checked = 0;
  test::for_each_family_schedule(4, {4, 8, 12}, [&](const Family& family, std::uint32_t m, const Schedule& s) {
    INFO(family.name << " m=" << m);
    Schedule run;
    try {
      run = schedule_as_run(s, Runtime::PyTorch);
    } catch (const std::exception&) {
      return;  // an order PyTorch's runtime lowering refuses (1F1B's own invalid one is not built here)
    }
    REQUIRE(run.ranks.size() == s.ranks.size());
    CHECK(run.ranks.front().actions.size() > s.ranks.front().actions.size());  // it did lower
    for (LivenessGranularity g : kLivenessGranularities) {
      const ActivationLiveness lowered = activation_liveness(run, s.placement.stage_to_rank, stated_microbatches(s), g);
      const ActivationLiveness compute = activation_liveness(s, s.placement.stage_to_rank, stated_microbatches(s), g);
      CHECK(lowered.slots_per_rank == compute.slots_per_rank);
    }
    ++checked;
  });
  CHECK(checked >= 30);
}

TEST_CASE("activation_liveness: an error names the rank whose order PyTorch cannot analyse") {
  DiagnosticSink sink;
  // Rank 1 runs 1F0 twice.
  auto p = read_pytorch_csv_text("s.csv", "0F0,0B0\n1F0,1F0,1B0\n", {}, sink);
  REQUIRE(p);
  try {
    activation_liveness(p->schedule, {0, 1}, 1, LivenessGranularity::StageMicrobatch);
    FAIL("no LivenessError");
  } catch (const LivenessError& e) {
    CHECK(e.rank() == 1);
    CHECK(std::string(e.what()) == "Activation lifetime (1, 0) has multiple forwards");  // PyTorch's words, unchanged
  }
}

TEST_CASE("liveness granularities: PyTorch's names, both ways") {
  for (LivenessGranularity g : kLivenessGranularities)
    CHECK(liveness_granularity_from_name(liveness_granularity_name(g)) == g);
  CHECK(liveness_granularity_from_name("stage_microbatch") == LivenessGranularity::StageMicrobatch);
  CHECK(liveness_granularity_from_name("microbatch") == LivenessGranularity::Microbatch);
  CHECK_FALSE(liveness_granularity_from_name("stage-microbatch").has_value());
}
