// Machine faces of `ppsched validate`: SARIF 2.1.0 for code scanning, and GitHub Actions
// workflow commands (annotations). The text and JSON faces are report/validate_text.hpp and
// report/validate_json.hpp.
//
//   SARIF   one run; tool.driver.rules[] is the rule table (id, descriptions, help, helpUri to
//           docs/rules.md#<id>, default level); each result has ruleId/ruleIndex, level, message,
//           a location (line 1 for a whole-file finding, which GitHub needs to display it; columns
//           are 1-based and endColumn is one past the cell) and related locations from the notes.
//   github  ::error file=F,line=L,col=C,endColumn=E,title=ppsched RULE::MESSAGE, escaped as the
//           workflow-command syntax requires; at most 10 per severity (GitHub's per-step limit),
//           the rest counted in one final ::notice.
#pragma once

#include <string>
#include <vector>

#include "report/validate_report.hpp"

namespace ppsched {

std::string sarif_report(const std::vector<FileDiagnostics>& files, const std::string& version);
std::string github_annotations(const std::vector<FileDiagnostics>& files);

}  // namespace ppsched
