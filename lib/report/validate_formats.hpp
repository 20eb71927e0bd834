// Machine faces of `ppsched validate`: SARIF 2.1.0 for code scanning, and GitHub Actions
// workflow commands (annotations). The text and JSON faces are report/validate_text.hpp and
// report/validate_json.hpp.
//
//   SARIF   one run; tool.driver.rules[] is the rule table (id, descriptions, help, an absolute
//           helpUri to rules.md#<id> under the docs' base URL, default level); each result has
//           ruleId/ruleIndex, level, message, a location (line 1 for a whole-file finding, which
//           GitHub needs to display it; columns are 1-based and endColumn is one past the cell)
//           and related locations from the notes. A file under the working directory is named
//           relative to it, against the uriBaseId %SRCROOT% (the repository root in CI).
//           A run stopped by an error still gives a whole log: what was checked before it, and
//           the error in invocations[0].toolExecutionNotifications (executionSuccessful false).
//   github  ::error file=F,line=L,col=C,endColumn=E,title=ppsched RULE::MESSAGE, escaped as the
//           workflow-command syntax requires; at most 10 per severity (GitHub's per-step limit).
//           The rest follow as compiler-style lines, so the log has every finding, and
//           github_step_summary gives all of them as a Markdown table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/validate_report.hpp"

namespace ppsched {

/// Where the rules' and the manual's pages are served: docs/rules.md is `base + "rules.md"`.
/// `validate --docs-url` overrides it; docs/ci.md documents it.
inline constexpr const char* kDocsBaseUrl = "https://github.com/ppsched/ppsched/blob/main/docs/";

/// Why `url` cannot be the docs' base, empty when it can: an absolute http:// or https:// URL of
/// printable ASCII (no blanks, quotes, backslashes or angle brackets), a host of letters, digits,
/// '.' and '-' (an optional :port, or an [IPv6] literal) with no user part, no query or fragment,
/// and a path that ends with '/', where rules.md is.
std::string docs_url_problem(std::string_view url);

struct SarifOptions {
  std::string version;                  ///< ppsched's, for tool.driver.semanticVersion
  std::string docs_url = kDocsBaseUrl;  ///< ends with '/'
  /// The directory paths are made relative to (the uriBaseId %SRCROOT%), absolute; empty: paths
  /// stay as given, with no uriBaseId.
  std::string srcroot;
  /// What stopped the run before every file was checked (a flag that does not hold for a file,
  /// an unreadable stage spec): each becomes an error notification of the run's invocation,
  /// which then says executionSuccessful false. Empty: no invocation is written.
  std::vector<std::string> tool_errors = {};
};

std::string sarif_report(const std::vector<FileDiagnostics>& files, const SarifOptions& opt);
std::string github_annotations(const std::vector<FileDiagnostics>& files);
/// Every finding as a Markdown table, for $GITHUB_STEP_SUMMARY: a heading, the counts, then a
/// row per finding, errors first. Stops adding rows before `max_bytes` (GitHub takes 1 MiB per
/// step) and says how many it left out, which the log still has.
std::string github_step_summary(const std::vector<FileDiagnostics>& files, std::size_t max_bytes = 1000000);

}  // namespace ppsched
