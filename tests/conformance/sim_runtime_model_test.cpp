// The default time model is what PyTorch's runtime executes: under --runtime pytorch a compute-only
// schedule of the corpus is lowered to exactly the compute_comms file PyTorch's
// _PipelineScheduleRuntime built from it (byte for byte), and its simulated time is the time of
// that file. Under --runtime ideal nothing is lowered.
#include <iostream>

#include "parse/pytorch_csv.hpp"
#include "sim/aggregate.hpp"
#include "sim/runtime.hpp"
#include "support/catch.hpp"
#include "support/corpus.hpp"

using namespace ppsched;
using namespace ppsched::test;

namespace {

Schedule load(const std::string& name) {
  DiagnosticSink sink;
  auto parsed = read_pytorch_csv((corpus_dir() / "configs" / name).string(), {}, sink);
  INFO(name);
  REQUIRE(parsed);
  return std::move(parsed->schedule);
}

double makespan(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank) {
  TimedOptions opt;
  opt.costs = CostModel::for_pipeline(static_cast<std::uint32_t>(s.rank_count()),
                                      static_cast<std::uint32_t>(stage_to_rank.size()));
  return simulate_aggregates(s, stage_to_rank, opt, MemoryModel{}).makespan;
}

}  // namespace

TEST_CASE("runtime pytorch runs each multi-stage compute order as PyTorch's runtime lowered it") {
  std::size_t total = 0, same = 0;
  for (const auto& config : manifest()["configs"]) {
    const auto& files = config["files"];
    const std::string cls = config["schedule_class"];
    if (!files.contains("compute_comms") || cls == "ScheduleGPipe" || cls == "Schedule1F1B") continue;
    ++total;
    const std::string id = config["id"];
    INFO(id);
    const Schedule compute = load(files["compute_only"]);
    REQUIRE(runtime_lowers(Runtime::PyTorch, compute));
    CHECK_FALSE(runtime_lowers(Runtime::Ideal, compute));
    const Schedule run = schedule_as_run(compute, Runtime::PyTorch);
    const Schedule expected = load(files["compute_comms"]);
    const bool identical = to_pytorch_csv(run) == to_pytorch_csv(expected);
    CHECK(identical);
    // A schedule that already has its comms runs as written.
    CHECK(to_pytorch_csv(schedule_as_run(expected, Runtime::PyTorch)) == to_pytorch_csv(expected));
    const auto stage_to_rank = config["stage_to_rank"].get<std::vector<std::uint32_t>>();
    CHECK(makespan(run, stage_to_rank) == makespan(expected, stage_to_rank));
    same += identical;
  }
  std::cout << "conformance: " << same << "/" << total
            << " multi-stage compute orders run under --runtime pytorch as PyTorch's runtime lowered them\n";
  CHECK(total > 50);
  CHECK(same == total);
}
