// Each rule on a small schedule where it must fire, and where it must not.
#include <set>

#include "check/check.hpp"
#include "check/rules_impl.hpp"
#include "parse/pytorch_csv.hpp"
#include "support/catch.hpp"
#include "synth/synth.hpp"

using namespace ppsched;

namespace {

std::set<std::string> rules_on(std::string_view csv, std::uint32_t ranks, std::uint32_t stages,
                               std::uint32_t microbatches, std::vector<std::uint32_t> placement,
                               std::vector<Diagnostic>* out = nullptr) {
  DiagnosticSink sink;
  auto p = read_pytorch_csv_text("s.csv", csv, {}, sink);
  REQUIRE(p);
  CheckContext ctx = context_for(p->schedule, std::move(placement), "s.csv", &p->source);
  ctx.ranks = ranks;
  ctx.stages = stages;
  ctx.microbatches = microbatches;
  run_checks(ctx, sink);
  std::set<std::string> ids;
  for (const auto& d : sink.diagnostics())
    if (d.severity == Severity::Error) ids.insert(d.rule);
  if (out) *out = sink.diagnostics();
  return ids;
}

}  // namespace

TEST_CASE("a clean two-rank 1F1B has no findings") {
  CHECK(rules_on("0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n", 2, 2, 2, {0, 1}).empty());
}

TEST_CASE("input-weight-count: an I without its W") {
  auto ids = rules_on("0F0,0B0\n1F0,1I0\n", 2, 2, 1, {0, 1});
  CHECK(ids.count("input-weight-count"));
  CHECK(ids.count("missing-backward"));
}

TEST_CASE("comm-between-colocated-stages: a SEND between stages on one rank") {
  auto ids = rules_on("0F0,1F0,0SEND_F0,1B0,0B0\n", 1, 2, 1, {0, 0});
  CHECK(ids.count("comm-between-colocated-stages"));
  CHECK_FALSE(rules_on("0F0,1F0,1B0,0B0\n", 1, 2, 1, {0, 0}).count("comm-between-colocated-stages"));
}

TEST_CASE("unshard-reshard: compute on a resharded stage, double unshard, never resharded") {
  std::vector<Diagnostic> d;
  auto ids = rules_on("0UNSHARD,0F0,0RESHARD,0B0,0UNSHARD,0UNSHARD\n", 1, 1, 1, {0}, &d);
  CHECK(ids.count("unshard-reshard"));
  std::size_t n = 0;
  for (const auto& x : d) n += x.rule == "unshard-reshard";
  CHECK(n == 3);  // B on a resharded stage, an unshard of an unsharded stage, never resharded
  CHECK(rules_on("0UNSHARD,0F0,0B0,0RESHARD\n", 1, 1, 1, {0}).empty());
}

TEST_CASE("reduce-grad-misplaced: REDUCE_GRAD before the last backward") {
  CHECK(rules_on("0F0,0F1,0B0,0REDUCE_GRAD,0B1\n", 1, 1, 2, {0}).count("reduce-grad-misplaced"));
  CHECK(rules_on("0F0,0F1,0B0,0B1,0REDUCE_GRAD\n", 1, 1, 2, {0}).empty());
}

TEST_CASE("full-and-split-backward and duplicate-action") {
  auto ids = rules_on("0F0,0B0,0I0,0W0\n", 1, 1, 1, {0});
  CHECK(ids.count("full-and-split-backward"));
  CHECK(rules_on("0F0,0F0,0B0\n", 1, 1, 1, {0}).count("duplicate-action"));
}

TEST_CASE("deadlock: both ranks wait for each other, and the notes name both") {
  std::vector<Diagnostic> d;
  // Rank 0 waits for 1B0 before running 0F1; rank 1 needs 0F1 before its 1B0.
  auto ids = rules_on("0F0,0B0,0F1,0B1\n1F0,1F1,1B0,1B1\n", 2, 2, 2, {0, 1}, &d);
  CHECK(ids.count("deadlock"));
  for (const auto& x : d)
    if (x.rule == "deadlock") CHECK(x.notes.size() == 2);
}

// Found by the pipeline fuzz target's seed replay: a stage that no rank runs has no rank in an
// inferred placement, and its findings were located at "$.programs[4294967295][0]".
TEST_CASE("a finding about a stage no rank runs is located at the file, not at a made-up program") {
  std::vector<Diagnostic> diags;
  auto ids = rules_on("0F0,0B0\n1F0,1B0\n", 2, 3, 1, {0, 1, 0xFFFFFFFF}, &diags);
  CHECK(ids.count("missing-forward"));
  bool seen = false;
  for (const auto& d : diags)
    if (d.rule == "missing-forward" && d.message.find("stage 2") != std::string::npos) {
      seen = true;
      CHECK(d.loc.file == "s.csv");
      CHECK(d.loc.path.empty());
      CHECK(d.loc.line == 0);
    }
  CHECK(seen);
}

TEST_CASE("the PyTorch version of --pytorch-version is read as a release line and nothing else") {
  using ppsched::parse_pytorch_version;
  CHECK(parse_pytorch_version("2.12") == std::pair{2, 12});
  CHECK(parse_pytorch_version("2.13.0") == std::pair{2, 13});
  CHECK(parse_pytorch_version("2.13.0a0+git1234abc") == std::pair{2, 13});
  CHECK(parse_pytorch_version("2.10+cu128") == std::pair{2, 10});
  CHECK(parse_pytorch_version("3.0rc1") == std::pair{3, 0});
  CHECK_FALSE(parse_pytorch_version(""));
  CHECK_FALSE(parse_pytorch_version("2"));
  CHECK_FALSE(parse_pytorch_version("2."));
  CHECK_FALSE(parse_pytorch_version("2.x"));
  CHECK_FALSE(parse_pytorch_version("v2.13"));
  CHECK_FALSE(parse_pytorch_version("2.13x"));
  CHECK_FALSE(parse_pytorch_version("123456.1"));
  // The boundary the rule uses: 2.12 fails, 2.13 filters.
  CHECK(*parse_pytorch_version("2.12") <
        std::pair{ppsched::kPytorchFiltersNonGradInputs[0], ppsched::kPytorchFiltersNonGradInputs[1]});
}

namespace {

// check_structure's count and the rule ids it reported, on `csv` as validate sees it (no flags).
std::pair<std::size_t, std::set<std::string>> structure_of(std::string_view csv, std::size_t keep = 50) {
  DiagnosticSink read;
  auto p = read_pytorch_csv_text("s.csv", csv, {}, read);
  REQUIRE(p);
  CheckContext ctx = context_for(p->schedule, placement_of(p->schedule).stage_to_rank, "s.csv", &p->source);
  DiagnosticSink sink(keep);
  const std::size_t n = check_structure(ctx, sink);
  std::set<std::string> ids;
  for (const auto& d : sink.diagnostics()) ids.insert(d.rule);
  return {n, ids};
}

}  // namespace

TEST_CASE("the structural rules are rows of the table, and errors by default") {
  CHECK(structural_rule_ids().size() == 11);
  for (std::string_view id : structural_rule_ids()) {
    const Rule* r = find_rule(id);
    REQUIRE(r);
    CHECK(r->level == RuleLevel::Error);
  }
}

TEST_CASE("check_structure: missing, duplicate or misplaced actions, and nothing else") {
  // A two-rank 1F1B with 0F1 twice.
  auto [n, ids] = structure_of("0F0,0F1,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n");
  CHECK(n == 1);
  CHECK(ids == std::set<std::string>{"duplicate-action"});
  // The old dialect: B for what is now I, BW for the full backward (no such kind: a parse
  // error); here B used as I followed by W: full and split backward together.
  std::tie(n, ids) = structure_of("0F0,0B0,0W0\n");
  CHECK(n == 1);
  CHECK(ids == std::set<std::string>{"full-and-split-backward"});
  // A backward before its forward and a W without its I.
  std::tie(n, ids) = structure_of("0B0,0F0,0W1,0F1,0I1\n");
  CHECK(ids == std::set<std::string>{"backward-before-forward", "weight-before-input-grad"});
  // Clean, and a send without its receive, which is for the simulator's deadlock report.
  CHECK(structure_of("0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n").first == 0);
  CHECK(structure_of("0F0,0SEND_F0,0B0\n1F0,1B0\n").first == 0);
  // The count holds what the sink kept out: the same number validate reports.
  std::tie(n, ids) = structure_of("0F0,0F0,0F0,0B0\n", 1);
  CHECK(n == 2);
}

TEST_CASE("check_structure proves every family's schedule clean in one pass") {
  for (const Family& f : families()) {
    SynthParams p;
    p.ranks = 4;
    p.microbatches = 8;
    Schedule s;
    try {
      s = synthesize(f.name, p);
    } catch (const SynthError&) {
      continue;  // a shape the family does not take (DualPipeV wants 2p microbatches, ...)
    }
    INFO(f.name);
    const CheckContext ctx = context_for(s, placement_of(s).stage_to_rank, std::string(f.name));
    CHECK(check::provably_structurally_clean(ctx));
    DiagnosticSink sink;
    CHECK(check_structure(ctx, sink) == 0);
  }
}

TEST_CASE("idle-in-compute-comms fires on a clean lowered schedule with one empty cell, and only then") {
  // Clean and lowered: the proof speaks for the rule (no idle seen) and it says nothing.
  const char* clean = "0F0,0SEND_F0,0RECV_B0,0B0\n1RECV_F0,1F0,1B0,1SEND_B0\n";
  CHECK(rules_on(clean, 2, 2, 1, {0, 1}).empty());
  // The same with an empty cell: structurally as clean, but the proof saw an idle step.
  std::vector<Diagnostic> found;
  CHECK(rules_on("0F0,0SEND_F0,,0RECV_B0,0B0\n1RECV_F0,1F0,1B0,1SEND_B0\n", 2, 2, 1, {0, 1}, &found) ==
        std::set<std::string>{"idle-in-compute-comms"});
  REQUIRE(found.size() == 1);
  CHECK(found[0].loc.line == 1);
  CHECK(found[0].loc.column == 14);  // the empty cell, after the comma that ends 0SEND_F0
}
