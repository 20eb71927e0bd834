// Every CSV of the corpus parses strictly and is written back byte for byte: PyTorch's
// writer output (CRLF) under configs/, PyTorch's test artifacts (LF) under upstream-artifacts/.
#include <iostream>

#include "parse/json_schedule.hpp"
#include "parse/pytorch_csv.hpp"
#include "support/catch.hpp"
#include "support/corpus.hpp"

using namespace ppsched;
using namespace ppsched::test;

namespace {

// Parses, writes back and compares; returns true when the bytes match.
bool roundtrips(const std::filesystem::path& file, LineEnding eol) {
  std::string original = read_file(file);
  DiagnosticSink sink;
  auto parsed = read_pytorch_csv(file.string(), {}, sink);
  INFO(file.filename().string());
  CHECK(sink.diagnostics().empty());
  if (!parsed) return false;
  std::string written = to_pytorch_csv(parsed->schedule, {eol});
  // The JSON form must carry the same schedule: CSV -> JSON -> CSV is lossless too.
  DiagnosticSink jsink;
  auto back = read_json_schedule_text("json", to_json_schedule(parsed->schedule), {}, jsink);
  bool json_ok = back && same_schedule(back->schedule, parsed->schedule);
  CHECK(json_ok);
  CHECK(written == original);
  return written == original && json_ok;
}

}  // namespace

TEST_CASE("every config CSV round-trips byte for byte (CRLF)") {
  auto files = config_csv_files();
  REQUIRE(files.size() >= 300);
  std::size_t same = 0;
  for (const auto& f : files) same += roundtrips(f, LineEnding::Crlf);
  std::cout << "conformance: " << same << "/" << files.size() << " config CSV files round-trip byte for byte\n";
  CHECK(same == files.size());
}

TEST_CASE("every upstream artifact CSV round-trips byte for byte (LF)") {
  auto files = upstream_csv_files();
  REQUIRE(files.size() == 3);
  std::size_t same = 0;
  for (const auto& f : files) same += roundtrips(f, LineEnding::Lf);
  std::cout << "conformance: " << same << "/" << files.size()
            << " upstream artifact CSV files round-trip byte for byte (--line-ending lf)\n";
  CHECK(same == files.size());
}

TEST_CASE("every negative-case CSV that PyTorch parses round-trips too") {
  // Negatives that are not parse-level mutations are well-formed CSV: the writer must keep them.
  std::size_t same = 0, total = 0;
  for (const auto& n : negative_cases()) {
    std::string m = n["mutation"];
    if (m.starts_with("malformed") || m.starts_with("noncanonical")) continue;
    ++total;
    same += roundtrips(corpus_dir() / "negative" / n["file"].get<std::string>(), LineEnding::Crlf);
  }
  std::cout << "conformance: " << same << "/" << total
            << " well-formed negative-case CSV files round-trip byte for byte\n";
  CHECK(total > 150);
  CHECK(same == total);
}
