#include "report/tune_report.hpp"

#include <nlohmann/json.hpp>

#include "support/catch.hpp"

namespace ppsched {
namespace {

TuneTrial trial(std::string family, std::uint32_t v, double makespan, double bubble, double peak, bool fits) {
  TuneTrial t;
  t.family = std::move(family);
  t.stages_per_rank = v;
  t.microbatches = 8;
  t.ran = true;
  t.fits = fits;
  t.iteration_time = makespan;
  t.bubble = bubble;
  t.peak = peak;
  return t;
}

// A result as the engine ranks it: the fitting by time, then the one over the cap, then one that
// could not run.
TuneResult ranked() {
  TuneResult r;
  r.trials.push_back(trial("auto", 1, 24, 0, 4, true));
  r.trials.back().note = "greedy cap=4";
  r.trials.push_back(trial("ZBH1", 1, 27, 0.111, 4, true));
  r.trials.push_back(trial("ZBH2", 1, 24, 0, 7, false));
  TuneTrial dead;
  dead.family = "DualPipeV";
  dead.stages_per_rank = 2;
  dead.microbatches = 8;
  dead.note = "DualPipeV needs at least 8 microbatches\nmore";
  r.trials.push_back(dead);
  return r;
}

TuneRequest request() {
  TuneRequest q;
  q.ranks = 4;
  q.microbatches = 8;
  q.memory_cap = 4;
  return q;
}

TuneSources sources(std::string cost, std::string costs_file, std::string stage_spec) {
  TuneSources src;
  src.cost = std::move(cost);
  src.costs_file = std::move(costs_file);
  src.stage_spec = std::move(stage_spec);
  src.time_model = "ideal: test";
  src.memory_in_bytes = !src.stage_spec.empty();
  src.times_in_us = !src.costs_file.empty();
  return src;
}

TEST_CASE("tune_report: the text table ranks only what fits and gives each row its verdict") {
  const std::string text = tune_text(request(), sources("F=1,I=1,W=1,B=2 (unit)", "", ""), ranked());
  CHECK(text.rfind("# ppsched tune: 4 ranks, 8 microbatches, stages per rank 1/2/4, memory cap 4 (microbatches of "
                   "activation per rank)\n# costs F=1,I=1,W=1,B=2 (unit); time model: ideal: test\n",
                   0) == 0);
  // 8 samples per time unit over 24 units: throughput 0.3333.
  CHECK(text.find(
            "\n   1  auto                   v=1 m=8                      24      0.3333    0.0%           4  best\n") !=
        std::string::npos);
  CHECK(text.find(
            "\n   2  ZBH1                   v=1 m=8                      27      0.2963   11.1%           4  +12.5% "
            "time, more bubble (11.1% vs 0.0%)\n") != std::string::npos);
  CHECK(
      text.find("\n   -  ZBH2                   v=1 m=8                      24      0.3333    0.0%           7  over "
                "the cap: peak 7 > 4\n") != std::string::npos);
  CHECK(text.find("\n   -  DualPipeV              v=2 m=8                       -           -       -           -  "
                  "cannot run: DualPipeV needs at least 8 microbatches\n") != std::string::npos);
  CHECK(text.find("# auto's schedule came from: greedy cap=4\n") != std::string::npos);
}

TEST_CASE("tune_report: --top shows the first rows and counts the rest by kind") {
  TuneSources src = sources("F=1", "", "");
  src.top = 1;
  const std::string text = tune_text(request(), src, ranked());
  CHECK(text.find("ZBH1") == std::string::npos);
  CHECK(text.find("# 3 more not shown (1 slower, 1 over the cap, 1 cannot run); --top 0 shows all\n") !=
        std::string::npos);
}

TEST_CASE("tune_report: with times in microseconds, iteration time has a unit and throughput is samples per second") {
  TuneResult r = ranked();
  r.trials[0].iteration_time = 2.5e6;  // 8 samples in 2.5 s
  const std::string text = tune_text(request(), sources("F=1", "costs.csv", ""), r);
  CHECK(text.find("samples/s") != std::string::npos);
  CHECK(text.find("   1  auto                   v=1 m=8                   2.5 s         3.2") != std::string::npos);
}

TEST_CASE("tune_report: JSON has the input, a rank only for fitting rows, and null for what was not given") {
  const auto j = nlohmann::json::parse(tune_json(request(), sources("F=2", "costs.csv", ""), ranked()));
  CHECK(j["schema_version"] == 2);
  CHECK(j["input"]["global_batch"].is_null());
  CHECK(j["input"]["memory_cap"] == 4);
  CHECK(j["input"]["costs_file"] == "costs.csv");
  CHECK(j["parameters"]["time_unit"] == "us");
  const auto& rows = j["results"];
  REQUIRE(rows.size() == 4);
  CHECK(rows[0]["rank"] == 1);
  CHECK(rows[0]["auto_origin"] == "greedy cap=4");
  CHECK(rows[0]["throughput"] == Approx(8 / 24e-6));
  CHECK(rows[2]["rank"].is_null());
  CHECK(rows[2]["fits"] == false);
  CHECK(rows[3]["ran"] == false);
  CHECK_FALSE(rows[3].contains("iteration_time"));
}

TEST_CASE("tune_report: nothing fits says so, with bytes as the unit when a stage spec is given") {
  TuneResult r = ranked();
  r.trials.erase(r.trials.begin(), r.trials.begin() + 2);  // only the unfit and the dead are left
  TuneRequest req = request();
  req.memory_cap = 4.0 * (1ull << 30);
  r.trials[0].peak = 7.5 * (1ull << 30);
  const std::string text = tune_text(req, sources("F=1", "", "spec.json"), r);
  CHECK(text.find("(bytes per rank: weights, gradients, optimizer state and activations)") != std::string::npos);
  CHECK(text.find("over the cap: peak 7.5 GiB > 4.0 GiB") != std::string::npos);
  CHECK(text.find("# nothing fits the memory cap\n") != std::string::npos);
  CHECK(text.find("auto's schedule came from") == std::string::npos);
}

TEST_CASE("tune_report: under pytorch-liveness the unit is PyTorch's slots, in the header and in JSON") {
  TuneRequest req = request();
  req.liveness = LivenessGranularity::Microbatch;
  const std::string text = tune_text(req, sources("F=1,I=1,W=1,B=2 (unit)", "", ""), ranked());
  CHECK(text.find("memory cap 4 (PyTorch's activation slots per rank, microbatch)\n") != std::string::npos);
  CHECK(text.find("over the cap: peak 7 > 4") != std::string::npos);
  const auto j = nlohmann::json::parse(tune_json(req, sources("F=1,I=1,W=1,B=2 (unit)", "", ""), ranked()));
  CHECK(j["parameters"]["memory_unit"] == "activation slots (PyTorch's liveness, microbatch)");
  CHECK(j["parameters"]["memory_model"] == "pytorch-liveness");
  CHECK(j["parameters"]["liveness_granularity"] == "microbatch");
  // The byte model's JSON has neither key: its report is as it was before the liveness mode.
  const auto bytes = nlohmann::json::parse(tune_json(request(), sources("F=1,I=1,W=1,B=2 (unit)", "", ""), ranked()));
  CHECK(bytes["parameters"]["memory_unit"] == "microbatches of activation");
  CHECK_FALSE(bytes["parameters"].contains("memory_model"));
  CHECK_FALSE(bytes["parameters"].contains("liveness_granularity"));
}

TEST_CASE("tune_report: the stages per rank a model's blocks leave out are notes, unless the stage count is fixed") {
  TuneRequest req = request();  // 4 ranks, stages per rank 1, 2, 4
  req.max_stages = 10;          // a model of 8 blocks
  CHECK(untried_shape_notes(req) ==
        std::vector<std::string>{
            "4 stage(s) per rank not tried: 16 stages exceed the 10 its blocks, embedding and head allow"});
  req.max_stages = 0;
  CHECK(untried_shape_notes(req).empty());
  req.only_stages = 8;  // a cost table of 8 stages: its own note says so
  CHECK(untried_shape_notes(req).empty());
}

}  // namespace
}  // namespace ppsched
