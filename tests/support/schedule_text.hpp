// Test helpers for the pass and simulator tests: a schedule from PyTorch CSV text (LF, one row
// per rank) and back, so that inputs and expectations read as the CSV files they stand for.
#pragma once

#include <string>
#include <string_view>

#include "parse/pytorch_csv.hpp"
#include "support/catch.hpp"

namespace ppsched::test {

/// Parses CSV text, leniently when asked (PyTorch's own reading of non-canonical cells).
inline Schedule schedule_from_csv(std::string_view text, bool lenient = false) {
  DiagnosticSink sink;
  CsvReadOptions opt;
  opt.lenient = lenient;
  auto parsed = read_pytorch_csv_text("test.csv", text, opt, sink);
  REQUIRE(parsed);
  return std::move(parsed->schedule);
}

/// The schedule as CSV text with LF line ends.
inline std::string csv_text(const Schedule& s) { return to_pytorch_csv(s, {LineEnding::Lf}); }

}  // namespace ppsched::test
