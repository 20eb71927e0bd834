// The text face of `ppsched validate`, for people and for problem matchers: per file, each
// finding as a compiler prints it (diag/render.hpp), a note on what was inferred and which flags
// would pin it, and a verdict line:
//
//   s.csv:4:5: error: 3B0 names stage 3; the pipeline has stages 0 to 2 [stage-out-of-range]
//   3F0,3B0,3F1
//       ^~~
//   s.csv: note: inferred 8 microbatches (the highest used) (pass --microbatches to check against it)
//   s.csv: 1 error(s), 0 warning(s)          <- or "ok", or "unreadable"
//
// Also the rule table of --list-rules and the paragraph of --explain.
#pragma once

#include <string>

#include "check/check.hpp"
#include "report/validate_report.hpp"

namespace ppsched {

/// One file's findings, inference note and verdict line; colour only when `color`. With `quiet`,
/// the findings alone (nothing for a clean file): ValidateTally's line ends the run instead.
std::string validate_text(const FileDiagnostics& f, bool color = false, bool quiet = false);

/// What `validate --quiet` says once per run: "ppsched validate: 1000 files, 2 with findings:
/// 3 error(s), 1 warning(s)" (and how many could not be read).
struct ValidateTally {
  std::size_t files = 0, with_findings = 0, unreadable = 0, errors = 0, warnings = 0;
  void add(const FileDiagnostics& f);
  std::string text() const;
};

/// `validate --list-rules`: one line per rule, id, default level and summary.
std::string rules_text();

/// `validate --explain ID`: the rule's summary, default level, how to fix it and its manual anchor.
std::string rule_explanation_text(const Rule& r);

/// The error for an --explain, --enable or --disable of no rule: "unknown rule 'ID'; did you mean
/// 'NEAR'? (see --list-rules)", the suggestion when an id is close.
std::string unknown_rule_message(const std::string& id);

}  // namespace ppsched
