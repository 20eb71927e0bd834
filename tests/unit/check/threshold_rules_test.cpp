// The CI thresholds (threshold_rules.cpp): max-memory under --memory-model pytorch-liveness, where
// it counts PyTorch's activation slots per rank instead of the simulated peak.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "check/check.hpp"
#include "check/rules_impl.hpp"
#include "parse/pytorch_csv.hpp"
#include "support/catch.hpp"
#include "synth/synth.hpp"

using namespace ppsched;

namespace {

Schedule zbv(std::uint32_t ranks, std::uint32_t microbatches) {
  SynthParams p;
  p.ranks = ranks;
  p.microbatches = microbatches;
  return synthesize("ZBVZeroBubble", p);
}

std::vector<Diagnostic> max_memory_findings(const CheckContext& ctx) {
  DiagnosticSink sink;
  check::max_memory(ctx, sink);
  return sink.diagnostics();
}

}  // namespace

TEST_CASE("max-memory under pytorch-liveness: a rank over the cap in slots, named with its count and granularity") {
  const Schedule s = zbv(4, 8);
  CheckContext ctx = context_for(s, s.placement.stage_to_rank, "zbv.csv");
  ctx.memory_liveness = LivenessGranularity::StageMicrobatch;
  const ActivationLiveness live =
      activation_liveness(s, s.placement.stage_to_rank, 8, LivenessGranularity::StageMicrobatch);
  REQUIRE(live.peak == 8);  // ZBV holds 2p stage-microbatch activations on rank 0
  ctx.max_memory = live.peak;
  CHECK(max_memory_findings(ctx).empty());
  ctx.max_memory = live.peak - 1;
  ctx.liveness.reset();
  const std::vector<Diagnostic> found = max_memory_findings(ctx);
  std::size_t over = 0;
  for (std::uint32_t slots : live.slots_per_rank) over += slots > live.peak - 1;
  REQUIRE(found.size() == over);
  CHECK(found.front().rule == "max-memory");
  CHECK(found.front().loc.file == "zbv.csv");
  CHECK(found.front().message ==
        "rank 0 holds 8 activation slots (PyTorch's liveness, stage_microbatch), over --max-memory 7");
}

TEST_CASE("max-memory under pytorch-liveness: the microbatch granularity counts one slot per microbatch in flight") {
  // Interleaved 1F1B, 4 ranks x 2 stages, 8 microbatches: rank 0 holds 11 stage-microbatch
  // activations of 8 microbatches at once; the byte model counts 5.5 microbatches (half a rank's
  // activation per chunk). simulate --memory-model pytorch-liveness reports the same counts.
  SynthParams p;
  p.ranks = 4;
  p.microbatches = 8;
  p.stages_per_rank = 2;
  const Schedule s = synthesize("Interleaved1F1B", p);
  auto context = [&](double cap, std::optional<LivenessGranularity> g) {
    CheckContext ctx = context_for(s, s.placement.stage_to_rank, "interleaved.csv");
    ctx.max_memory = cap;
    ctx.memory_liveness = g;
    return ctx;
  };
  auto messages = [&](const CheckContext& ctx) {
    std::vector<std::string> out;
    for (const Diagnostic& d : max_memory_findings(ctx)) out.push_back(d.message);
    return out;
  };
  CHECK(messages(context(8, std::nullopt)).empty());
  CHECK(messages(context(8, LivenessGranularity::StageMicrobatch)) ==
        std::vector<std::string>{
            "rank 0 holds 11 activation slots (PyTorch's liveness, stage_microbatch), over --max-memory 8",
            "rank 1 holds 9 activation slots (PyTorch's liveness, stage_microbatch), over --max-memory 8"});
  CHECK(messages(context(8, LivenessGranularity::Microbatch)).empty());
  CHECK(messages(context(7.5, LivenessGranularity::Microbatch)) ==
        std::vector<std::string>{
            "rank 0 holds 8 activation slots (PyTorch's liveness, microbatch), over --max-memory 7.5",
            "rank 1 holds 8 activation slots (PyTorch's liveness, microbatch), over --max-memory 7.5"});
}

TEST_CASE("max-memory under pytorch-liveness: an order PyTorch cannot analyse is an error with its message and rank") {
  DiagnosticSink read;
  auto p = read_pytorch_csv_text("dup.csv", "0F0,0B0\n1F0,1F0,1B0\n", {}, read);
  REQUIRE(p);
  CheckContext ctx = context_for(p->schedule, {0, 1}, "dup.csv", &p->source);
  ctx.max_memory = 4;
  ctx.memory_liveness = LivenessGranularity::Microbatch;
  const std::vector<Diagnostic> found = max_memory_findings(ctx);
  REQUIRE(found.size() == 1);
  CHECK(found.front().rule == "max-memory");
  CHECK(found.front().message ==
        "PyTorch's activation liveness cannot analyse rank 1's order, so --max-memory 4 cannot be checked in slots "
        "(microbatch): Activation lifetime (1, 0) has multiple forwards");
  // run_checks reports it as an error beside the structural rule that names the same mistake.
  DiagnosticSink sink;
  run_checks(ctx, sink);
  std::set<std::string> errors;
  for (const Diagnostic& d : sink.diagnostics())
    if (d.severity == Severity::Error) errors.insert(d.rule);
  CHECK(errors.count("max-memory"));
  CHECK(errors.count("duplicate-action"));
}

TEST_CASE("max-memory under pytorch-liveness: the slots are counted once per check run, on the order alone") {
  const Schedule s = zbv(4, 8);
  CheckContext ctx = context_for(s, s.placement.stage_to_rank, "zbv.csv");
  ctx.max_memory = 100;
  ctx.memory_liveness = LivenessGranularity::StageMicrobatch;
  CHECK(max_memory_findings(ctx).empty());
  REQUIRE(ctx.liveness);
  CHECK_FALSE(ctx.simulation);  // no simulation was needed for it
  const check::Liveness* first = ctx.liveness.get();
  CHECK(&check::liveness_of(ctx) == first);
  CHECK(first->counts->slots_per_rank.size() == 4);
}
