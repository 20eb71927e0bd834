// activation_liveness against PyTorch's analyze_pipeline_activation_liveness on every config of
// the cff2ecc8 corpus: slots per rank and the peak at both granularities, or PyTorch's ValueError
// word for word. The order analysed is what PyTorch analyses: the lowered order (compute_comms)
// of the runtime classes, the compute order of GPipe and 1F1B.
#include <iostream>

#include "parse/pytorch_csv.hpp"
#include "sim/activation_liveness.hpp"
#include "support/catch.hpp"
#include "support/corpus.hpp"

using namespace ppsched;
using namespace ppsched::test;

TEST_CASE("the cff2ecc8 corpus: activation liveness equals PyTorch's slot counts on every config") {
  const auto& manifest = cff2ecc8_manifest();
  std::size_t compared = 0, same = 0, errors = 0;
  for (const auto& config : manifest["configs"]) {
    const auto& files = config["files"];
    const std::string cls = config["schedule_class"];
    const bool single = cls == "ScheduleGPipe" || cls == "Schedule1F1B";
    const char* which = single ? "compute_only" : "compute_comms";
    if (!files.contains(which)) continue;
    const std::string id = config["id"];
    INFO(id);
    DiagnosticSink sink;
    auto parsed = read_pytorch_csv(cff2ecc8_file(files[which]).string(), {}, sink);
    REQUIRE(parsed);
    const auto stage_to_rank = config["stage_to_rank"].get<std::vector<std::uint32_t>>();
    const auto microbatches = config["microbatches"].get<std::uint32_t>();
    for (auto g : {LivenessGranularity::StageMicrobatch, LivenessGranularity::Microbatch}) {
      const auto& want = config["activation_liveness"][std::string(liveness_granularity_name(g))];
      if (!want.contains("ok")) continue;
      ++compared;
      try {
        const ActivationLiveness got = activation_liveness(parsed->schedule, stage_to_rank, microbatches, g);
        CHECK(want["ok"].get<bool>());
        if (!want["ok"].get<bool>()) continue;
        CHECK(got.slots_per_rank == want["num_slots_per_rank"].get<std::vector<std::uint32_t>>());
        CHECK(got.peak == want["peak_num_slots"].get<std::uint32_t>());
        same += got.slots_per_rank == want["num_slots_per_rank"].get<std::vector<std::uint32_t>>();
      } catch (const LivenessError& e) {
        CHECK_FALSE(want["ok"].get<bool>());
        CHECK(std::string(e.what()) == want.value("message", std::string()));
        same += std::string(e.what()) == want.value("message", std::string());
        ++errors;
      }
    }
  }
  std::cout << "conformance (PyTorch cff2ecc8): activation liveness equal on " << same << "/" << compared
            << " (config, granularity) pairs, " << errors << " of them PyTorch's errors\n";
  CHECK(compared >= 1000);
  CHECK(same == compared);
}
