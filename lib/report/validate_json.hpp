// The JSON face of `ppsched validate`: one document for all the files, for tools that want more
// than SARIF's shape (the inference notes, the counts after --werror, whether a file was read).
//
//   {"schema_version": 1, "tool": "ppsched validate", "files": [
//     {"file": "s.csv", "readable": true, "errors": 1, "warnings": 0,
//      "notes": ["8 microbatches (the highest used)"],
//      "diagnostics": [{"rule": "stage-out-of-range", "severity": "error", "message": "...",
//                       "file": "s.csv", "line": 4, "column": 5, "notes": []}]}]}
//
// A diagnostic has "path" (its JSON path) only when the file is JSON; note locations are
// line and column in the same file. Printed with two-space indents and a final newline. A run
// that an error stopped before every file was checked still gives the document, with the files
// checked before it and "tool_errors": ["what stopped it", ...] (absent when nothing did).
#pragma once

#include <string>
#include <vector>

#include "report/validate_report.hpp"

namespace ppsched {

std::string validate_json(const std::vector<FileDiagnostics>& files, const std::vector<std::string>& tool_errors = {});

}  // namespace ppsched
