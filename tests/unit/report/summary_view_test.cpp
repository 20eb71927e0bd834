// The summary view (report/summary_view.cpp) of a real simulation: 1F1B on 2 ranks, 3
// microbatches, unit costs (rank 0 holds 2 microbatches of activation at t=1).
#include <nlohmann/json.hpp>

#include "report/sim_views.hpp"
#include "sim/aggregate.hpp"
#include "support/catch.hpp"
#include "synth/synth.hpp"

using namespace ppsched;

namespace {

SimAnalysis one_f_one_b() {
  const Schedule s = synthesize("1F1B", {2, 3});
  TimedOptions opt;
  opt.costs = CostModel::uniform(2, 1, unit_costs());
  return simulate_aggregates(s, s.placement.stage_to_rank, opt, MemoryModel{});
}

constexpr const char* kHead =
    "makespan           12\n"
    "iteration time     12 (optimizer sync: the makespan)\n"
    "bubble ratio       25.00% global (1 - compute / (ranks x makespan))\n"
    "                   25.00% per stage (Zero Bubble paper: (max stage span - its compute) / max span)\n";
constexpr const char* kRanks =
    "\nrank     busy     idle   busy%\n"
    "   0        9        3   75.0%\n"
    "   1        9        3   75.0%\n";

}  // namespace

TEST_CASE("summary view: makespan, both bubble ratios, the peak and each rank's busy time") {
  const SimAnalysis a = one_f_one_b();
  CHECK(summary_text(a) == std::string(kHead) + "peak memory        2 microbatches (rank 0 at t=1)\n" + kRanks);
  const nlohmann::ordered_json j = summary_json(a);
  CHECK(j["makespan"] == 12.0);
  CHECK(j["iteration_time"] == 12.0);
  CHECK(j["optimizer"] == "sync");
  CHECK(j["bubble_ratio_global"] == 0.25);
  CHECK(j["bubble_ratio_per_stage"] == 0.25);
  CHECK(j["peak_memory"] == 2.0);
  CHECK(j["memory_unit"] == "microbatches");
  CHECK_FALSE(j.contains("memory_cap"));  // no cap, no verdict
  CHECK(j["ranks"] == nlohmann::ordered_json::parse(R"([{"busy":9.0,"idle":3.0},{"busy":9.0,"idle":3.0}])"));
}

TEST_CASE("summary view: a peak over the cap EXCEEDS it, in text and JSON") {
  const SimAnalysis a = one_f_one_b();
  CHECK(summary_text(a, {1.5, "", Optimizer::Sync}) ==
        std::string(kHead) +
            "peak memory        2 microbatches (rank 0 at t=1)  EXCEEDS the cap of 1.5 microbatches\n" + kRanks);
  const nlohmann::ordered_json j = summary_json(a, {1.5, "", Optimizer::Sync});
  CHECK(j["memory_cap"] == 1.5);
  CHECK(j["memory_cap_exceeded"] == true);
  CHECK(summary_json(a, {2, "", Optimizer::Sync})["memory_cap_exceeded"] == false);  // at the cap fits
}

TEST_CASE("summary view: a peak within rounding of the cap fits, as simulate's exit code says") {
  // simulate exits 0 here (fits_under_cap); the summary said "EXCEEDS the cap of 2".
  const SimAnalysis a = one_f_one_b();
  const double cap = 2 * (1 - 1e-12);
  REQUIRE(fits_under_cap(a.memory.max_peak(), cap));
  CHECK(summary_text(a, {cap, "", Optimizer::Sync}).find("EXCEEDS") == std::string::npos);
  CHECK(summary_json(a, {cap, "", Optimizer::Sync})["memory_cap_exceeded"] == false);
}

TEST_CASE("summary view: the time model, when stated, is the first line") {
  const SimAnalysis a = one_f_one_b();
  CHECK(summary_text(a, {0, "ideal: as given", Optimizer::Sync})
            .rfind("time model         ideal: as given\nmakespan", 0) == 0);
  CHECK(summary_text(a).rfind("makespan", 0) == 0);
}

TEST_CASE("summary view: under a post-validated optimizer an iteration costs the longest rank span") {
  SimAnalysis a;
  a.makespan = 10;
  a.ranks.resize(2);
  a.ranks[0].first_start = 2;  // starts late, ends last: span 7
  a.ranks[0].last_end = 9;
  a.ranks[1].first_start = 0;  // span 6
  a.ranks[1].last_end = 6;
  SimReportOptions opt;
  opt.optimizer = Optimizer::PostValidated;
  CHECK(summary_text(a, opt).find("iteration time     7 (optimizer post-validated: the longest rank span)\n") !=
        std::string::npos);
  const nlohmann::ordered_json j = summary_json(a, opt);
  CHECK(j["makespan"] == 10.0);
  CHECK(j["iteration_time"] == 7.0);
  CHECK(j["optimizer"] == "post-validated");
  CHECK(summary_json(a)["iteration_time"] == 10.0);  // sync: the makespan
}
