// The activation-liveness face (report/liveness_view.cpp): the report of both granularities on
// Interleaved1F1B over 2 ranks and 4 microbatches (the figures of the
// simulate-pytorch-liveness-interleaved golden), its text and JSON, and the error's words.
#include "report/liveness_view.hpp"

#include "parse/pytorch_csv.hpp"
#include "support/catch.hpp"
#include "synth/synth.hpp"

using namespace ppsched;

TEST_CASE("liveness report: both granularities' slots per rank, the cap on the one given") {
  const Schedule s = synthesize("Interleaved1F1B", {2, 4});
  const LivenessReport r = liveness_report(s, s.placement.stage_to_rank, LivenessGranularity::Microbatch, 3);
  CHECK(r.stage_microbatch.peak == 5);
  CHECK(r.stage_microbatch.slots_per_rank == std::vector<std::uint32_t>{5, 3});
  CHECK(r.microbatch.peak == 4);
  CHECK(r.microbatch.slots_per_rank == std::vector<std::uint32_t>{4, 3});
  CHECK(r.capped == LivenessGranularity::Microbatch);
  CHECK(r.cap == 3);
  CHECK(r.capped_peak() == 4);
  CHECK(liveness_text(r).rfind("activation liveness (PyTorch's analyze_pipeline_activation_liveness), slots per rank\n"
                               "granularity        peak rank 0 rank 1\n"
                               "stage_microbatch      5      5      3\n"
                               "microbatch            4      4      3\n",
                               0) == 0);
  CHECK(liveness_json(r)["microbatch"]["peak_slots"] == 4);
}

TEST_CASE("liveness report: an order PyTorch cannot analyse names its rank") {
  DiagnosticSink sink;
  auto p = read_pytorch_csv_text("s.csv", "0F0,0B0\n1F0,1F0,1B0\n", {}, sink);  // rank 1 runs 1F0 twice
  REQUIRE(p);
  try {
    liveness_report(p->schedule, {0, 1}, LivenessGranularity::StageMicrobatch, 0);
    FAIL("no LivenessError");
  } catch (const LivenessError& e) {
    CHECK(liveness_error_text(e) ==
          "PyTorch's activation liveness cannot analyse rank 1's order: Activation lifetime (1, 0) has multiple "
          "forwards");
  }
}
