// count_findings (report/validate_report.cpp): errors and warnings, with and without --werror.
#include "report/validate_report.hpp"

#include "support/catch.hpp"

using namespace ppsched;

TEST_CASE("count_findings: notes count for nothing, --werror counts warnings as errors") {
  FileDiagnostics f;
  for (Severity s : {Severity::Error, Severity::Warning, Severity::Warning, Severity::Note}) {
    Diagnostic d;
    d.severity = s;
    f.diagnostics.push_back(d);
  }
  count_findings(f, false);
  CHECK(f.errors == 1);
  CHECK(f.warnings == 2);
  count_findings(f, true);
  CHECK(f.errors == 3);
  CHECK(f.warnings == 0);
  f.diagnostics.clear();
  count_findings(f, true);
  CHECK(f.errors == 0);
  CHECK(f.warnings == 0);
}
