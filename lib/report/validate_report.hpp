// What `ppsched validate` found in each file: the one structure its four faces read (text and
// JSON, report/validate_text.hpp and report/validate_json.hpp; SARIF and GitHub annotations,
// report/validate_formats.hpp). Not for deciding the exit code: that is the driver's.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "check/expectations.hpp"
#include "diag/diagnostic.hpp"

namespace ppsched {

/// One file as validate checked it.
struct FileDiagnostics {
  std::string file;  ///< as given on the command line (repo-relative in CI)
  std::vector<Diagnostic> diagnostics;
  bool readable = true;                  ///< false: it could not be read as a schedule
  std::size_t errors = 0, warnings = 0;  ///< see count_findings
  std::vector<Inference> inferred{};     ///< what the check took from the file itself
};

/// Counts `f`'s errors and warnings; with `werror`, a warning counts as an error.
void count_findings(FileDiagnostics& f, bool werror);

}  // namespace ppsched
