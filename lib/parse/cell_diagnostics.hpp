// Turns a cell's parse problem (ir/action_text.hpp) into a Diagnostic with the advice a user
// needs: what a valid cell looks like, the closest action kind, how PyTorch would read it.
// Shared by the CSV and JSON readers so both speak the same way.
#pragma once

#include "diag/diagnostic.hpp"
#include "ir/action_text.hpp"

namespace ppsched {

/// `issue` must be set. The location and snippet are the caller's.
Diagnostic cell_diagnostic(const CellParse& parsed, bool lenient, SourceLoc loc, Snippet snippet);

}  // namespace ppsched
