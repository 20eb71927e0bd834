// The faces of `ppsched run` (report/run_report.cpp) on a real run: 1F1B on 2 ranks and 2
// microbatches, on the fake device without jitter, so every measured time is the cost table's.
#include "report/run_report.hpp"

#include <nlohmann/json.hpp>

#include "io/byte_sink.hpp"
#include "model/costs.hpp"
#include "passes/passes.hpp"
#include "run/fake_device.hpp"
#include "support/catch.hpp"
#include "synth/synth.hpp"

using namespace ppsched;

namespace {

run::BenchmarkReport one_f_one_b(int devices = 1) {
  run::RunRequest r;
  r.name = "1F1B";
  r.schedule = lower_send_recv(synthesize("1F1B", {2, 2}));
  r.stage_to_rank = r.schedule.placement.stage_to_rank;
  r.plan.workload = run::Workload::Synthetic;
  KindCosts k = unit_costs();
  k[static_cast<int>(ActionKind::F)] = 100;
  k[static_cast<int>(ActionKind::B)] = 200;
  r.plan.costs = r.sim.costs = CostModel::uniform(2, 1, k);
  run::FakeRuntime runtime({devices, 0, 1});
  run::MeasureOptions m;
  m.warmup = 1;
  m.rule.max_iters = 3;
  return run::run_benchmarks(runtime, {r}, {}, m);
}

RunReportConfig config() {
  RunReportConfig c;
  c.version = "1.2.3";
  c.backend = "fake";
  c.workload = "synthetic";
  c.dtype = "bf16";
  c.warmup = 1;
  c.stop.max_iters = 3;
  c.cost = "F=100,B=200";
  return c;
}

}  // namespace

TEST_CASE("run report text: the header lines, one row per schedule, and memory per device") {
  const std::string full = run_report_text(config(), one_f_one_b());
  INFO(full);
  // The last line is a host timing of this run: its shape only.
  const std::size_t host = full.rfind("# host time to enqueue one launch");
  REQUIRE(host != std::string::npos);
  CHECK(full.substr(host).starts_with(
      "# host time to enqueue one launch, us (less waits on other processes; the slowest process): 1F1B "));
  const std::string text = full.substr(0, host);
  CHECK(text ==
        "# ppsched 1.2.3 run: backend fake, driver none, runtime none\n"
        "# device 0: fake device 0 (replays the cost table)\n"
        "# workload synthetic: each action spins for its cost (F=100,B=200)\n"
        "# warm-up 1; stop: 3 iterations\n"
        "# sim_us: the simulator with the given costs; times per iteration in microseconds; p99 by nearest rank\n"
        "#           schedule ranks  mbs warmup  iters   median_us      p99_us      min_us      max_us    cv%      "
        "sim_us  ratio  stop\n"
        "                1F1B     2    2      1      3       900.0       900.0       900.0       900.0   0.00       "
        "900.0  1.000  iterations\n"
        "# peak memory per device, MiB: measured (buffers) / predicted (memory model) / fixed (weights)\n"
        "#               1F1B device 0: 832.0 / 768.0 / 0.0\n");
}

TEST_CASE("run report text: the GEMM workload, the stop rule, and a table measured by this run") {
  RunReportConfig c = config();
  c.workload = "gemm";
  c.shape = {2, 1024, 512, 2};
  c.stop = {};
  c.sim_from_measured_costs = true;
  const std::string text = run_report_text(c, one_f_one_b(2));
  CHECK(text.find("# device 1: fake device 1 (replays the cost table)\n") != std::string::npos);
  CHECK(text.find("# workload gemm: 2 layers of 1024x1024, 512 tokens per microbatch, bf16\n") != std::string::npos);
  CHECK(text.find("# warm-up 1; stop: >= 10 samples and 0.5 s, then noise <= 0.5%, timeout 15 s\n") !=
        std::string::npos);
  CHECK(text.find("# sim_us: the simulator with this run's measured cost table;") != std::string::npos);
  // One rank per device now: each holds its own stage's stash.
  CHECK(text.find("#               1F1B device 0: 544.0 / 512.0 / 0.0\n"
                  "#               1F1B device 1: 288.0 / 256.0 / 0.0\n") != std::string::npos);
}

TEST_CASE("run report json: config, env, devices and each result's statistics, times and actions") {
  const auto j = nlohmann::ordered_json::parse(run_report_json(config(), one_f_one_b()));
  CHECK(j["schema_version"] == 1);
  CHECK(j["config"]["backend"] == "fake");
  CHECK(j["config"]["iters"] == 3);
  CHECK(j["config"]["cost"] == "F=100,B=200");
  CHECK(j["config"]["p99_method"] == "nearest-rank");
  CHECK(j["env"]["ppsched_version"] == "1.2.3");
  CHECK(j["devices"] ==
        nlohmann::ordered_json::parse(R"json([{"ordinal": 0, "name": "fake device 0 (replays the cost table)",
                                                              "total_memory_bytes": 0, "sm_count": 0}])json"));
  REQUIRE(j["results"].size() == 1);
  const auto& r = j["results"][0];
  std::vector<std::string> keys;
  for (const auto& [k, v] : r.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"schedule", "ranks", "microbatches", "device_of_rank", "warmup", "stop",
                                         "iteration", "times_us", "simulated_us", "shared_compute",
                                         "measured_over_simulated", "host_us_per_launch", "memory", "actions"});
  CHECK(r["device_of_rank"] == nlohmann::ordered_json::parse("[0, 0]"));
  CHECK(r["iteration"]["p50_us"] == 900.0);
  CHECK(r["iteration"]["count"] == 3);
  CHECK(r["times_us"] == nlohmann::ordered_json::parse("[900.0, 900.0, 900.0]"));
  CHECK(r["measured_over_simulated"] == 1.0);
  CHECK(r["actions"][0]["stage"] == 0);
  CHECK(r["actions"][0]["kind"] == "F");
  CHECK(r["actions"][0]["p50_us"] == 100.0);
  CHECK(r["shared_compute"] == false);
  CHECK_FALSE(r.contains("isolated_actions"));
  // Where ranks shared a device, the kinds timed alone come too: what the cost table holds.
  run::BenchmarkReport shared = one_f_one_b();
  shared.results[0].shared_compute = true;
  const std::vector<double> alone = {40.0, 42.0};
  shared.results[0].isolated = {{0, ActionKind::F, run::summarize(alone)}};
  const auto js = nlohmann::ordered_json::parse(run_report_json(config(), shared));
  CHECK(js["results"][0]["shared_compute"] == true);
  CHECK(js["results"][0]["isolated_actions"][0]["kind"] == "F");
  CHECK(js["results"][0]["isolated_actions"][0]["p50_us"] == 41.0);
  RunReportConfig measured = config();
  measured.sim_from_measured_costs = true;
  CHECK(run_report_text(measured, shared)
            .find("each kind timed alone on its device, ranks that share a device taking "
                  "turns on its compute") != std::string::npos);
}

TEST_CASE("run report of a multi-process run: the launcher, a row per process, the links, memory per process") {
  run::BenchmarkReport rep = one_f_one_b();
  rep.launcher = "Open MPI v4.1.4";
  rep.startup_s = 0.5;
  rep.processes = {{0, {"gpu-a", 0, 0, 1}, 0, 0, "H100", 1, 1}, {1, {"gpu-b", 1, 0, 1}, 1, 3, "H100", 1, 1}};
  rep.links = {{"inter_node", 0, 1, 12.5, 25e3}};
  const std::string text = run_report_text(config(), rep);
  INFO(text);
  CHECK(text.find("# launcher Open MPI v4.1.4: 2 processes on 2 nodes; start-up 0.50 s (slowest process)\n"
                  "# process 0: rank 0, host gpu-a (node 0, local rank 0), device 0 H100; discoveries 1, opens 1\n"
                  "# process 1: rank 1, host gpu-b (node 1, local rank 0), device 3 H100; discoveries 1, opens 1\n"
                  "# link inter_node (processes 0 and 1): 12.5 us latency, 25.00 GB/s\n") != std::string::npos);
  CHECK(text.find("# device 0") == std::string::npos);  // the rows name each process's device
  CHECK(text.find("# peak memory per process, MiB:") != std::string::npos);
  CHECK(text.find("#               1F1B process 1: ") != std::string::npos);
  const auto j = nlohmann::ordered_json::parse(run_report_json(config(), rep));
  CHECK(j["multi_process"]["launcher"] == "Open MPI v4.1.4");
  CHECK(j["multi_process"]["processes"][1]["host"] == "gpu-b");
  CHECK(j["multi_process"]["processes"][1]["ordinal"] == 3);
  CHECK(j["multi_process"]["links"][0]["bytes_per_us"] == 25e3);
}

TEST_CASE("run report: the measured trace is a Chrome trace of the device streams, labelled with the backend") {
  const run::BenchmarkReport rep = one_f_one_b();
  std::string text;
  StringSink out(text);
  write_measured_trace(rep.results.front(), "fake", out);
  const auto j = nlohmann::json::parse(text);
  CHECK(j["otherData"]["label"] == "measured by ppsched run (fake), last timed iteration");
  bool gpu_compute = false;
  for (const auto& e : j["traceEvents"])
    gpu_compute |= e["name"] == "thread_name" && e["args"]["name"] == "gpu compute";
  CHECK(gpu_compute);
}

TEST_CASE("run report: why no GPU can be used") {
  run::Discovery d;
  d.status = run::Discovery::Status::NoDriver;
  d.message = "cudaGetDeviceCount failed";
  CHECK(no_gpu_message(d) == "no usable GPU (no GPU driver): cudaGetDeviceCount failed");
  d.status = run::Discovery::Status::NotBuilt;
  CHECK(no_gpu_message(d).rfind("no usable GPU (built without CUDA): ", 0) == 0);
}

TEST_CASE("run report: the first ratio outside --min-ratio and --max-ratio, or nothing") {
  const run::BenchmarkReport rep = one_f_one_b();  // no jitter: measured = simulated
  REQUIRE(rep.results.size() == 1);
  REQUIRE(rep.results[0].ratio() == Approx(1.0));
  CHECK(ratio_bounds_problem(rep, 0, 0).empty());  // no bounds
  CHECK(ratio_bounds_problem(rep, 0.9, 1.1).empty());
  CHECK(ratio_bounds_problem(rep, 1.5, 0) == "'1F1B': measured/simulated = 1.000, outside [1.5, inf]");
  CHECK(ratio_bounds_problem(rep, 0, 0.5) == "'1F1B': measured/simulated = 1.000, outside [0, 0.5]");
}
