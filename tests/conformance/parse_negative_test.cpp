// Parse-level negative cases. PyTorch rejects `rejected_at_parse` cells; ppsched must reject
// them at the mutated cell. `noncanonical_*` and `malformed_trailing_junk` cells are accepted
// by PyTorch's prefix-matching parser: ppsched rejects them when strict, and under --lenient
// reads them exactly as PyTorch does (the schedule equals the unmutated one) with a warning.
#include <iostream>
#include <regex>

#include "parse/pytorch_csv.hpp"
#include "support/catch.hpp"
#include "support/corpus.hpp"

using namespace ppsched;
using namespace ppsched::test;

namespace {

struct Mutation {
  std::size_t rank = 0, cell = 0;
  std::string original, replacement;
};

// "rank 0 cell 3: '0F0' replaced by ' 0F0 '"
Mutation parse_detail(const std::string& detail) {
  static const std::regex re(R"(rank (\d+) cell (\d+): '(.*)' replaced by '(.*)')");
  std::smatch m;
  REQUIRE(std::regex_match(detail, m, re));
  return {std::stoul(m[1]), std::stoul(m[2]), m[3], m[4]};
}

// How many negatives of the given mutations the manifest says it holds.
std::size_t manifest_count(std::initializer_list<const char*> mutations) {
  std::size_t n = 0;
  for (const char* m : mutations) n += manifest()["counts"]["negative_per_mutation"].value(m, 0);
  return n;
}

bool is_lenient_case(const std::string& mutation) {
  return mutation.starts_with("noncanonical_") || mutation == "malformed_trailing_junk";
}

// The first error's position must fall inside the mutated cell.
bool rejected_at_cell(const DiagnosticSink& sink, const CellSpan& span) {
  for (const auto& d : sink.diagnostics()) {
    if (d.severity != Severity::Error) continue;
    return d.loc.line == span.line && d.loc.column >= span.begin_col && d.loc.column < span.end_col;
  }
  return false;
}

}  // namespace

TEST_CASE("every rejected_at_parse negative is rejected at its cell") {
  std::size_t total = 0, ok = 0;
  for (const auto& n : negative_cases()) {
    if (n["pytorch_verdict"] != "rejected_at_parse") continue;
    ++total;
    auto path = corpus_dir() / "negative" / n["file"].get<std::string>();
    Mutation mut = parse_detail(n["mutation_detail"]);
    CellSpan span = locate_cell(read_file(path), mut.rank, mut.cell);
    INFO(n["id"].get<std::string>());
    for (bool lenient : {false, true}) {
      DiagnosticSink sink;
      auto parsed = read_pytorch_csv(path.string(), {lenient}, sink);
      CHECK_FALSE(parsed);
      CHECK(rejected_at_cell(sink, span));
      ok += (!parsed && rejected_at_cell(sink, span)) ? 1 : 0;
    }
  }
  std::cout << "conformance: " << ok / 2 << "/" << total
            << " rejected_at_parse negatives rejected at the right line and column (strict and lenient)\n";
  CHECK(total == manifest_count({"malformed_0X1", "malformed_F0", "malformed_lowercase", "malformed_overlap_type"}));
  CHECK(ok == 2 * total);
}

TEST_CASE("noncanonical and trailing-junk negatives: strict rejects, lenient reads as PyTorch") {
  std::size_t total = 0, strict_ok = 0, lenient_ok = 0;
  for (const auto& n : negative_cases()) {
    std::string mutation = n["mutation"];
    if (!is_lenient_case(mutation)) continue;
    ++total;
    auto path = corpus_dir() / "negative" / n["file"].get<std::string>();
    std::string text = read_file(path);
    Mutation mut = parse_detail(n["mutation_detail"]);
    CellSpan span = locate_cell(text, mut.rank, mut.cell);
    INFO(n["id"].get<std::string>());

    DiagnosticSink strict;
    bool strict_rejected = !read_pytorch_csv(path.string(), {}, strict) && rejected_at_cell(strict, span);
    CHECK(strict_rejected);
    strict_ok += strict_rejected;

    // Under --lenient the schedule must be the unmutated one: put the original cell back.
    std::string expected = text;
    std::size_t line_start = 0;
    for (std::size_t r = 0; r < mut.rank; ++r) line_start = expected.find('\n', line_start) + 1;
    expected.replace(line_start + span.begin_col - 1, span.end_col - span.begin_col, mut.original);
    DiagnosticSink lenient;
    auto parsed = read_pytorch_csv(path.string(), {true}, lenient);
    bool read_as_pytorch =
        parsed && !lenient.has_errors() && lenient.warning_count() == 1 && to_pytorch_csv(parsed->schedule) == expected;
    CHECK(read_as_pytorch);
    lenient_ok += read_as_pytorch;
  }
  std::cout << "conformance: " << strict_ok << "/" << total << " non-canonical negatives rejected in strict mode; "
            << lenient_ok << "/" << total << " accepted with one warning in lenient mode, read as PyTorch reads them\n";
  CHECK(total == manifest_count({"noncanonical_leading_zero", "noncanonical_whitespace", "malformed_trailing_junk"}));
  CHECK(strict_ok == total);
  CHECK(lenient_ok == total);
}
