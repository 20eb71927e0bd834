// The table of simulate's views (report/sim_views.cpp): one row per view, faces that are the
// views' own, and the needs-a-timeline flags that decide whether simulate builds a Timeline.
#include "report/sim_views.hpp"

#include <algorithm>

#include "sim/analysis.hpp"
#include "sim/timed.hpp"
#include "support/catch.hpp"
#include "synth/synth.hpp"

using namespace ppsched;

namespace {

const SimView& view(std::string_view name) {
  const auto views = sim_views();
  const auto it = std::find_if(views.begin(), views.end(), [&](const SimView& v) { return v.name == name; });
  REQUIRE(it != views.end());
  return *it;
}

}  // namespace

TEST_CASE("sim views: every view once, in the text report's order, each with a JSON key and place") {
  REQUIRE(sim_view_names() ==
          std::vector<std::string>{"summary", "bubbles", "memory", "critical-path", "memory-timeline", "stage-costs"});
  std::vector<std::string_view> keys;
  std::vector<int> positions;
  for (const SimView& v : sim_views()) {
    keys.push_back(v.json_key);
    positions.push_back(v.json_position);
  }
  CHECK(keys == std::vector<std::string_view>{"summary", "bubbles", "memory", "critical_path", "memory_timeline",
                                              "stage_costs"});
  // The JSON document: summary, bubbles, critical_path, memory, the memory timeline, stage costs.
  CHECK(positions == std::vector<int>{0, 1, 3, 2, 4, 5});
}

TEST_CASE("sim views: stage costs come only on request, and show what the simulator used") {
  for (bool json : {false, true}) {
    const auto defaults = default_sim_views(json);
    CHECK(std::find(defaults.begin(), defaults.end(), "stage-costs") == defaults.end());
  }
  CostModel costs = CostModel::uniform(2, 1, unit_costs());
  costs.per_stage[1][static_cast<std::size_t>(ActionKind::W)] = 2.5;
  std::vector<StageSpec> spec(2);
  spec[0].weight_bytes = 3 * 1024.0 * 1024 * 1024;
  spec[0].activation_memory_bytes = 2048;
  spec[1].activation_memory_bytes = 4096;
  spec[1].weight_grad_memory_bytes = 1024;
  const std::vector<std::string> layers{"embedding + 2 blocks", "2 blocks + head"};
  const StageCosts c{costs, spec, layers, 2, true};
  const std::string text = stage_costs_text(&c);
  CHECK_THAT(text, Catch::Contains("embedding + 2 blocks") && Catch::Contains("2 blocks + head") &&
                       Catch::Contains("3.00 GiB") && Catch::Contains("2.5"));
  const auto j = stage_costs_json(&c);
  CHECK(j["time_unit"] == "us");
  REQUIRE(j["stages"].size() == 2);
  CHECK(j["stages"][1]["W"] == 2.5);
  CHECK(j["stages"][1]["layers"] == "2 blocks + head");
  CHECK(j["stages"][0]["static_bytes"] == spec[0].weight_bytes);
  CHECK(j["stages"][0]["weight_grad_memory_bytes"] == 2048);  // M_W defaults to M_B
  CHECK(j["stages"][1]["weight_grad_memory_bytes"] == 1024);
  CHECK_THAT(stage_costs_text(nullptr), Catch::Contains("not known"));
}

TEST_CASE("sim views: only the critical path and the memory timeline need a timeline, and only they grow per action") {
  CHECK_FALSE(view("summary").text_needs_timeline);
  CHECK_FALSE(view("summary").json_needs_timeline);
  CHECK_FALSE(view("bubbles").text_needs_timeline);
  CHECK_FALSE(view("bubbles").json_needs_timeline);
  CHECK_FALSE(view("memory").text_needs_timeline);
  CHECK_FALSE(view("memory").json_needs_timeline);
  CHECK(view("critical-path").text_needs_timeline);
  CHECK(view("critical-path").json_needs_timeline);
  CHECK(view("memory-timeline").text_needs_timeline);
  CHECK(view("memory-timeline").json_needs_timeline);
  for (const char* name : {"summary", "bubbles", "memory"}) CHECK_FALSE(view(name).per_action);
  CHECK(view("critical-path").per_action);
  CHECK(view("memory-timeline").per_action);
}

TEST_CASE("sim views: the table's faces are the views' own, with the report's options") {
  const Schedule s = synthesize("ZBH1", {4, 8});
  TimedOptions opt;
  opt.costs = CostModel::uniform(4, 1, unit_costs());
  const Timeline t = simulate_timed(s, s.placement.stage_to_rank, opt);
  const SimAnalysis a = analyze(s, t, MemoryModel{});
  const SimReportOptions cap{3, "", Optimizer::Sync};
  const SimViewInput in{s, t, a, cap};
  CHECK(view("summary").text(in) == summary_text(a, cap));
  CHECK(view("summary").json(in) == summary_json(a, cap));
  CHECK(view("bubbles").text(in) == bubbles_text(a));
  CHECK(view("bubbles").json(in) == bubbles_json(a));
  CHECK(view("memory").text(in) == memory_text(a, cap));
  CHECK(view("memory").json(in) == memory_json(a, cap));
  CHECK(view("critical-path").text(in) == critical_path_text(s, t));
  CHECK(view("critical-path").json(in) == critical_path_json(s, t));
  CHECK(view("memory-timeline").text(in) == memory_timeline_text(a));
  CHECK(view("memory-timeline").json(in) == memory_timeline_json(a));
  CHECK(view("memory").text(in).find("over the cap") != std::string::npos);  // ZB-H1 holds 4 on rank 0
}
