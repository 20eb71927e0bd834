// validate's text face (report/validate_text.cpp) on a real check: a CSV read, checked against
// what resolve_context makes of it, its snippets filled from the same text.
#include "report/validate_text.hpp"

#include "check/expectations.hpp"
#include "diag/source_snippets.hpp"
#include "parse/pytorch_csv.hpp"
#include "support/catch.hpp"

using namespace ppsched;

namespace {

// Rank 0 runs 0W1 before 0I1: an error, and the deadlock it causes; 0I0 on the first stage is a note.
constexpr const char* kWeightFirst =
    "0F0,0F1,0I0,0W1,0I1,0W0\n"
    "1F0,1I0,1W0,1F1,1I1,1W1\n";

FileDiagnostics validated(const char* text, const Expectations& want = {}, bool werror = false) {
  FileDiagnostics f;
  f.file = "w.csv";
  DiagnosticSink sink;
  auto parsed = read_pytorch_csv_text(f.file, text, CsvReadOptions{}, sink);
  f.readable = parsed.has_value();
  if (parsed) {
    ResolvedContext r = resolve_context(parsed->schedule, &parsed->source, f.file, want);
    f.inferred = r.inferred;
    run_checks(r.context, sink);
  }
  f.diagnostics = sink.diagnostics();
  if (needs_snippets(f.diagnostics)) fill_snippets(f.diagnostics, text);  // as validate does
  count_findings(f, werror);
  return f;
}

constexpr const char* kFindings =
    "w.csv:1:13: error: 0W1 runs before 0I1 [weight-before-input-grad]\n"
    "0F0,0F1,0I0,0W1,0I1,0W0\n"
    "            ^~~\n"
    "w.csv:1:17: note: the input-gradient pass is here\n"
    "0F0,0F1,0I0,0W1,0I1,0W0\n"
    "                ^~~\n"
    "w.csv:1:13: error: the schedule deadlocks: a cycle of 1 waiting action(s), hop by hop below [deadlock]\n"
    "0F0,0F1,0I0,0W1,0I1,0W0\n"
    "            ^~~\n"
    "w.csv:1:13: note: rank 0 waits at 0W1 for I or B of stage 0, microbatch 1, which comes after it on the same "
    "queue, which closes the cycle\n"
    "0F0,0F1,0I0,0W1,0I1,0W0\n"
    "            ^~~\n"
    "w.csv:1:9: note: 0I0 is on the first stage, where PyTorch's runtime skips an I and runs the whole backward in "
    "the W: splitting I and W buys nothing there [first-stage-input-grad]\n"
    "0F0,0F1,0I0,0W1,0I1,0W0\n"
    "        ^~~\n";

}  // namespace

TEST_CASE("validate text: findings with their source lines, what was inferred and which flags pin it, the verdict") {
  CHECK(validate_text(validated(kWeightFirst)) ==
        std::string(kFindings) +
            "w.csv: note: inferred 2 ranks (the row count); 2 stages (the highest stage used); 2 microbatches (the "
            "highest used); each stage on the first rank that runs it (PyTorch's inference) (pass --ranks, "
            "--stages-per-rank, --microbatches, --placement or --schedule to check against them)\n"
            "w.csv: 2 error(s), 0 warning(s)\n");
}

TEST_CASE("validate text: one inference names its flag and 'it', nothing inferred, no note") {
  Expectations want;
  want.ranks = 2;
  want.stages_per_rank = 1;
  want.style = PlacementStyle::Loop;
  CHECK(validate_text(validated(kWeightFirst, want)) ==
        std::string(kFindings) +
            "w.csv: note: inferred 2 microbatches (the highest used) (pass --microbatches to check against it)\n"
            "w.csv: 2 error(s), 0 warning(s)\n");
  want.microbatches = 2;
  CHECK(validate_text(validated(kWeightFirst, want)) == std::string(kFindings) + "w.csv: 2 error(s), 0 warning(s)\n");
}

TEST_CASE("validate text: ok, unreadable, and warnings counted apart from errors") {
  Expectations want;
  want.ranks = 2;
  want.stages_per_rank = 1;
  want.microbatches = 1;
  want.style = PlacementStyle::Loop;
  CHECK(validate_text(validated("0F0,0B0\n1F0,1B0\n", want)) == "w.csv: ok\n");

  FileDiagnostics unreadable = validated("0F0,0X0\n");
  CHECK(validate_text(unreadable) ==
        "w.csv:1:6: error: unknown action kind 'X' in '0X0' [action-syntax]\n"
        "0F0,0X0\n"
        "     ^\n"  // the reader's own caret, under the kind: not read again
        "note: action kinds are F, B, I, W, SEND_F, RECV_F, SEND_B, RECV_B, UNSHARD, RESHARD, REDUCE_GRAD and "
        "OVERLAP_F_B\n"
        "note: an action is <stage><KIND>[<microbatch>], e.g. '2F0', '1SEND_B3', '0UNSHARD', or "
        "'(0F7;7B3)OVERLAP_F_B'; an empty cell is an idle step\n"
        "w.csv: unreadable\n");

  FileDiagnostics warned;
  warned.file = "s.csv";
  Diagnostic w;
  w.severity = Severity::Warning;
  w.rule = "input-grad-without-requires-grad";
  w.loc.file = "s.csv";
  w.message = "a warning";
  warned.diagnostics = {w};
  count_findings(warned, false);
  CHECK(validate_text(warned) ==
        "s.csv: warning: a warning [input-grad-without-requires-grad]\ns.csv: 0 error(s), 1 warning(s)\n");
  count_findings(warned, true);  // --werror
  CHECK(validate_text(warned) ==
        "s.csv: warning: a warning [input-grad-without-requires-grad]\ns.csv: 1 error(s), 0 warning(s)\n");
}

TEST_CASE("validate text: --list-rules has a line per rule, --explain says how to fix one") {
  const std::string table = rules_text();
  std::size_t lines = 0;
  for (char c : table) lines += c == '\n';
  CHECK(lines == rules().size());
  CHECK(table.find("deadlock                   error    ") != std::string::npos);
  const Rule* r = find_rule("deadlock");
  REQUIRE(r);
  CHECK(rule_explanation_text(*r) == std::string(r->id) + " (error by default)\n  " + std::string(r->summary) +
                                         "\n  how to fix: " + std::string(r->help) + "\n  docs/rules.md#deadlock\n");
}

TEST_CASE("validate text: an unknown rule id, with the closest rule when there is one") {
  CHECK(unknown_rule_message("deadlok") == "unknown rule 'deadlok'; did you mean 'deadlock'? (see --list-rules)");
  CHECK(unknown_rule_message("zzzzzzzzzzzzzzzz") == "unknown rule 'zzzzzzzzzzzzzzzz' (see --list-rules)");
}
