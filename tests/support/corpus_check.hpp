// The validator on one corpus file, configured as its manifest entry says: for the conformance
// tests of the check area (check_test.cpp, check_cff2ecc8_test.cpp).
#pragma once

#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/check.hpp"
#include "parse/pytorch_csv.hpp"

namespace ppsched::test {

/// The error diagnostics `file` gets with the entry's placement, ranks, stages and microbatches
/// (none when it does not parse: the parse tests judge that).
inline std::vector<Diagnostic> corpus_errors(const std::filesystem::path& file, const nlohmann::json& entry,
                                             bool expect_compute_only = false) {
  DiagnosticSink sink;
  auto parsed = read_pytorch_csv(file.string(), {}, sink);
  if (parsed) {
    CheckContext ctx = context_for(parsed->schedule, entry["stage_to_rank"].get<std::vector<std::uint32_t>>(),
                                   file.filename().string(), &parsed->source);
    ctx.ranks = entry["ranks"];
    ctx.stages = entry["num_stages"];
    ctx.microbatches = entry["microbatches"];
    ctx.expect_compute_only = expect_compute_only;
    run_checks(ctx, sink);
  }
  std::vector<Diagnostic> errors;
  for (const auto& d : sink.diagnostics())
    if (d.severity == Severity::Error) errors.push_back(d);
  return errors;
}

}  // namespace ppsched::test
