// The memory view (report/memory_view.cpp) of a real simulation: 1F1B on 2 ranks, 3
// microbatches, unit costs.
#include <nlohmann/json.hpp>

#include "report/sim_views.hpp"
#include "sim/analysis.hpp"
#include "sim/timed.hpp"
#include "support/catch.hpp"
#include "synth/synth.hpp"

using namespace ppsched;

namespace {

// Through the Timeline path, which fills in the step function the JSON face shows.
SimAnalysis one_f_one_b() {
  const Schedule s = synthesize("1F1B", {2, 3});
  TimedOptions opt;
  opt.costs = CostModel::uniform(2, 1, unit_costs());
  return analyze(s, simulate_timed(s, s.placement.stage_to_rank, opt), MemoryModel{});
}

constexpr const char* kHead = "peak activation memory per rank (microbatches)\nrank      peak    at time\n";

}  // namespace

TEST_CASE("memory view: each rank's peak and when it is first reached") {
  const SimAnalysis a = one_f_one_b();
  CHECK(memory_text(a) == std::string(kHead) +
                              "   0         2          1\n"
                              "   1         1          1\n");
  const nlohmann::ordered_json j = memory_json(a);
  CHECK(j["unit"] == "microbatches");
  REQUIRE(j["ranks"].size() == 2);
  CHECK(j["ranks"][0]["peak"] == 2.0);
  CHECK(j["ranks"][0]["peak_time"] == 1.0);
  CHECK_FALSE(j["ranks"][0].contains("over_cap"));
  CHECK_FALSE(j["ranks"][0].contains("timeline"));  // per action: the memory-timeline view's
}

TEST_CASE("memory-timeline view: each rank's step function, only where asked for") {
  const SimAnalysis a = one_f_one_b();
  const nlohmann::ordered_json j = memory_timeline_json(a);
  CHECK(j["unit"] == "microbatches");
  REQUIRE(j["ranks"].size() == 2);
  // The step function: 1 at t=0 (0F0), 2 at t=1 (0F1), ... back to 0 once the last B ends.
  CHECK(j["ranks"][0].front() == nlohmann::ordered_json::parse("[0.0, 1.0]"));
  CHECK(j["ranks"][0].back()[1] == 0.0);
  const std::string text = memory_timeline_text(a);
  CHECK(text.rfind("memory over time per rank (microbatches): time value, at each change\n   0  0 1  1 2", 0) == 0);
  // The default JSON document leaves it and the critical path out; text leaves only it out.
  CHECK(default_sim_views(true) == std::vector<std::string>{"summary", "bubbles", "memory"});
  CHECK(default_sim_views(false) == std::vector<std::string>{"summary", "bubbles", "memory", "critical-path"});
}

TEST_CASE("memory view: the ranks over the cap are marked, in text and JSON") {
  const SimAnalysis a = one_f_one_b();
  CHECK(memory_text(a, {1.5, "", Optimizer::Sync}) == std::string(kHead) +
                                                          "   0         2          1  over the cap\n"
                                                          "   1         1          1\n");
  const nlohmann::ordered_json j = memory_json(a, {1.5, "", Optimizer::Sync});
  CHECK(j["ranks"][0]["over_cap"] == true);
  CHECK(j["ranks"][1]["over_cap"] == false);
}

TEST_CASE("memory view: a peak within rounding of the cap is not over it, as simulate's exit code says") {
  const SimAnalysis a = one_f_one_b();
  const double cap = 2 * (1 - 1e-12);
  REQUIRE(fits_under_cap(a.memory.max_peak(), cap));
  CHECK(memory_text(a, {cap, "", Optimizer::Sync}).find("over the cap") == std::string::npos);
  CHECK(memory_json(a, {cap, "", Optimizer::Sync})["ranks"][0]["over_cap"] == false);
}
