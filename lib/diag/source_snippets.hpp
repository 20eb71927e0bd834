// The source line and caret under a diagnostic, filled in from the file's text after the checks
// ran: rules point at (line, column) through the source map and never hold the text. validate's
// text face prints the snippet; SARIF's endColumn and GitHub's endColumn read its length.
//
//   s.csv:2:5: error: 1SEND_F0 has no matching 2RECV_F0 [send-without-recv]
//   1F0,1SEND_F0,1B0        <- the line
//       ^~~~~~~~            <- the cell: from the column to the next comma
#pragma once

#include <string_view>
#include <vector>

#include "diag/diagnostic.hpp"

namespace ppsched {

/// Whether some diagnostic points at a line but has no snippet yet (a clean file, or one whose
/// findings are all whole-file, need not be read again).
bool needs_snippets(const std::vector<Diagnostic>& diagnostics);

/// Fills the snippet of each diagnostic and note that has a line and a column, from `text`, the
/// whole file: the cell from the column to the next comma or the end of the line.
void fill_snippets(std::vector<Diagnostic>& diagnostics, std::string_view text);

}  // namespace ppsched
