// simulate's report (report/simulate_report.cpp) on a real simulation: 1F1B on 2 ranks and 2
// microbatches with unit costs. The JSON document's blocks and views in their order, the text
// report's views in theirs, the lock-step document, the deadlock message and the title.
#include "report/simulate_report.hpp"

#include <nlohmann/json.hpp>

#include "passes/passes.hpp"
#include "report/ascii_gantt.hpp"
#include "report/steps_view.hpp"
#include "sim/analysis.hpp"
#include "sim/pytorch_steps.hpp"
#include "support/catch.hpp"
#include "synth/synth.hpp"

using namespace ppsched;

namespace {

struct Simulated {
  Schedule s = synthesize("1F1B", {2, 2});
  Timeline t;
  SimAnalysis a;
  Simulated() {
    TimedOptions opt;
    opt.costs = CostModel::uniform(2, 1, unit_costs());
    t = simulate_timed(s, s.placement.stage_to_rank, opt);
    a = analyze(s, t, MemoryModel{});
  }
  SimViewInput input() const { return {s, t, a, SimReportOptions{0, "unit", Optimizer::Sync}}; }
};

SimulateReport family_report(std::vector<std::string> views) {
  SimulateReport r;
  r.source = {"", "1F1B", 2, 2, 0, "none"};
  r.parameters.time_model = "unit";
  r.parameters.cost = "F=1,I=1,W=1,B=2 (unit)";
  r.views = std::move(views);
  return r;
}

std::vector<std::string> keys(const nlohmann::ordered_json& j) {
  std::vector<std::string> out;
  for (const auto& [key, value] : j.items()) out.push_back(key);
  return out;
}

}  // namespace

TEST_CASE("simulate json: schema, input, parameters, then the views in the table's JSON order") {
  const Simulated sim;
  const auto j = nlohmann::ordered_json::parse(simulate_json(family_report(default_sim_views(true)), sim.input()));
  CHECK(keys(j) == std::vector<std::string>{"schema_version", "input", "parameters", "summary", "bubbles", "memory"});
  CHECK(j["schema_version"] == 1);
  CHECK(j["input"] ==
        nlohmann::ordered_json::parse(R"({"schedule":"1F1B","ranks":2,"microbatches":2,"lower":"none"})"));
  CHECK(keys(j["parameters"]) == std::vector<std::string>{"model", "runtime", "optimizer", "runtime_params",
                                                          "time_model", "blocking_comms", "overlap_factor", "cost",
                                                          "costs_file", "topology", "stage_spec", "model_file", "gpu"});
  CHECK(j["parameters"]["model"] == "timed");
  CHECK(j["parameters"]["optimizer"] == "sync");
  CHECK(j["parameters"]["overlap_factor"] == 1.0);
  CHECK(j["parameters"]["cost"] == "F=1,I=1,W=1,B=2 (unit)");
  CHECK(j["summary"]["makespan"] == 9.0);  // the 1f1b golden's
  CHECK(j["summary"] == summary_json(sim.a, sim.input().options));

  // Every view, in --views order or not: critical_path before memory, the timeline last.
  const auto all = nlohmann::ordered_json::parse(
      simulate_json(family_report({"memory-timeline", "memory", "critical-path", "bubbles", "summary"}), sim.input()));
  CHECK(keys(all) == std::vector<std::string>{"schema_version", "input", "parameters", "summary", "bubbles",
                                              "critical_path", "memory", "memory_timeline"});
}

TEST_CASE("simulate json: a file's input, an eager send mode and the liveness view when given") {
  const Simulated sim;
  SimulateReport r = family_report({"summary"});
  r.source = {"zbv.csv", "", 0, 0, 0, "send-recv"};
  r.parameters.send = SendMode{SendMode::Kind::Eager};
  LivenessReport live = liveness_report(sim.s, sim.s.placement.stage_to_rank, LivenessGranularity::Microbatch, 3);
  r.liveness = &live;
  const auto j = nlohmann::ordered_json::parse(simulate_json(r, sim.input()));
  CHECK(j["input"] == nlohmann::ordered_json::parse(R"({"file":"zbv.csv","lower":"send-recv"})"));
  CHECK(keys(j["parameters"]).back() == "send_mode");
  CHECK(j["parameters"]["send_mode"] == "eager");
  CHECK(keys(j) == std::vector<std::string>{"schema_version", "input", "parameters", "summary", "activation_liveness"});
  CHECK(j["activation_liveness"] == liveness_json(live));
  // Without --send-mode, no key: reports made before it keep their bytes.
  CHECK_FALSE(
      nlohmann::ordered_json::parse(simulate_json(family_report({"summary"}), sim.input()))["parameters"].contains(
          "send_mode"));
}

TEST_CASE("simulate text: the views in the table's order a blank line apart, liveness, then the chart") {
  const Simulated sim;
  const SimViewInput in = sim.input();
  CHECK(simulate_text(family_report({"memory", "summary"}), in) ==
        summary_text(sim.a, in.options) + "\n" + memory_text(sim.a, in.options));
  SimulateReport r = family_report({"bubbles"});
  LivenessReport live = liveness_report(sim.s, sim.s.placement.stage_to_rank, LivenessGranularity::StageMicrobatch, 0);
  r.liveness = &live;
  r.gantt_width = 20;
  AsciiOptions g;
  g.width = 20;
  CHECK(simulate_text(r, in) == bubbles_text(sim.a) + "\n" + liveness_text(live) + "\n" + ascii_gantt(sim.s, sim.t, g));
}

TEST_CASE("simulate report: a timeline only where a view's face or the chart needs one") {
  CHECK_FALSE(simulate_report_needs_timeline(family_report(default_sim_views(true)), true));
  CHECK_FALSE(simulate_report_needs_timeline(family_report({"summary", "bubbles", "memory"}), false));
  CHECK(simulate_report_needs_timeline(family_report({"critical-path"}), true));
  CHECK(simulate_report_needs_timeline(family_report({"memory-timeline"}), false));
  SimulateReport chart = family_report({"summary"});
  chart.gantt_width = 40;
  CHECK(simulate_report_needs_timeline(chart, false));
}

TEST_CASE("simulate pytorch-steps json: input, the lock-step model, then the steps and the grid") {
  const Schedule s = lower_send_recv(synthesize("1F1B", {2, 2}));
  const Schedule timeline = simulate_pytorch_steps(s, s.placement.stage_to_rank, 2);
  const auto j = nlohmann::ordered_json::parse(pytorch_steps_json({"", "1F1B", 2, 2, 1, "send-recv"}, timeline));
  CHECK(keys(j) == std::vector<std::string>{"schema_version", "input", "parameters", "steps", "timeline"});
  CHECK(j["input"]["stages_per_rank"] == 1);
  CHECK(j["parameters"] == nlohmann::ordered_json::parse(R"({"model":"pytorch-steps"})"));
  CHECK(j["steps"] == lock_step_count(timeline));
  CHECK(j["timeline"].size() == 2);
}

TEST_CASE("simulate deadlock: the verdict, then each stuck rank's step and what it waits for") {
  Schedule s = lower_send_recv(synthesize("1F1B", {2, 2}));
  auto& r1 = s.ranks[1].actions;
  r1.erase(r1.begin());  // 1RECV_F0
  TimedOptions opt;
  opt.costs = CostModel::uniform(2, 1, unit_costs());
  try {
    simulate_timed(s, s.placement.stage_to_rank, opt);
    FAIL("no deadlock");
  } catch (const TimedDeadlock& d) {
    const std::string text = timed_deadlock_text(d, s);
    CHECK(text.rfind("the schedule deadlocks: no remaining action can start\nnote: rank ", 0) == 0);
    CHECK(text.find("\nnote: rank 1 is stuck at its step 0 (1F0), waiting for RECV_F of stage 1, microbatch 0") !=
          std::string::npos);
    CHECK(text.back() != '\n');
  }
}

TEST_CASE("simulate title: the file's display name, or the family's shape") {
  CHECK(simulate_title({"runs/zbv.csv", "", 0, 0, 0, "none"}) == "ppsched simulate: runs/zbv.csv");
  CHECK(simulate_title({"-", "", 0, 0, 0, "none"}) == "ppsched simulate: <stdin>");
  CHECK(simulate_title({"", "ZBH1", 4, 8, 0, "none"}) == "ppsched simulate: ZBH1, 4 ranks, 8 microbatches");
}
