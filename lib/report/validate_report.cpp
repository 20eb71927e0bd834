#include "report/validate_report.hpp"

namespace ppsched {

void count_findings(FileDiagnostics& f, bool werror) {
  f.errors = f.warnings = 0;
  for (const Diagnostic& d : f.diagnostics) {
    const bool as_error = d.severity == Severity::Error || (werror && d.severity == Severity::Warning);
    f.errors += as_error;
    f.warnings += !as_error && d.severity == Severity::Warning;
  }
}

}  // namespace ppsched
