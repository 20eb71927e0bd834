// A file read by two threads (CsvReadOptions::split_from_bytes) must read exactly as one thread reads
// it: the same schedule, source map and diagnostics, in the same order, whatever the second half holds.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "diag/render.hpp"
#include "parse/pytorch_csv.hpp"
#include "support/catch.hpp"

using namespace ppsched;

namespace {

struct Reading {
  bool ok = false;
  std::string csv, rendered;
  std::vector<std::uint32_t> lines, columns;
  /// What the reader gathered of infer_shape (placement, microbatches), and whether it is right.
  std::optional<std::pair<std::vector<std::uint32_t>, std::uint32_t>> shape;
  bool shape_right = true;
};

Reading summarize(const std::optional<ParsedSchedule>& p, const DiagnosticSink& sink) {
  Reading r;
  r.ok = p.has_value();
  for (Diagnostic d : sink.diagnostics()) {
    d.loc.file = "s.csv";  // the same name from memory and from a file
    r.rendered += render_text(d);
  }
  if (!p) return r;
  r.csv = to_pytorch_csv(p->schedule);
  r.lines = p->source.rank_line;
  if (p->shape) {
    r.shape.emplace(p->shape->placement.stage_to_rank, p->shape->microbatches);
    const InferredShape want = infer_shape(p->schedule);
    r.shape_right = p->shape->placement == want.placement && p->shape->microbatches == want.microbatches;
  }
  for (std::size_t rank = 0; rank < p->schedule.rank_count(); ++rank)
    for (std::size_t step = 0; step < p->schedule.ranks[rank].actions.size(); ++step)
      r.columns.push_back(p->source.column(rank, step));
  return r;
}

Reading read_text(std::string_view text, CsvReadOptions opt, std::size_t cap) {
  DiagnosticSink sink(cap);
  auto p = read_pytorch_csv_text("s.csv", text, opt, sink);
  return summarize(p, sink);
}

Reading read_file(const std::string& path, CsvReadOptions opt, std::size_t cap) {
  DiagnosticSink sink(cap);
  auto p = read_pytorch_csv(path, opt, sink);
  return summarize(p, sink);
}

void check_equal(const Reading& got, const Reading& expected) {
  CHECK(got.ok == expected.ok);
  CHECK(got.rendered == expected.rendered);
  CHECK(got.csv == expected.csv);
  CHECK(got.lines == expected.lines);
  CHECK(got.columns == expected.columns);
  CHECK(got.shape == expected.shape);
  CHECK(got.shape_right);
  CHECK(expected.shape_right);
}

// Reads `text` from memory and from a file, by one thread and by two, and checks all four agree;
// returns the one-thread reading.
Reading check_same(const std::string& text, bool lenient = false, ActionDialect dialect = ActionDialect::Current,
                   std::size_t cap = 1000) {
  CsvReadOptions one{lenient};
  one.dialect = dialect;
  one.split_from_bytes = ~std::uint64_t{0};
  CsvReadOptions two = one;
  two.split_from_bytes = 0;
  const Reading expected = read_text(text, one, cap);
  check_equal(read_text(text, two, cap), expected);
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ppsched-csv-two-threads-" + std::to_string(::getpid()))).string();
  std::ofstream(path, std::ios::binary) << text;
  for (const CsvReadOptions& opt : {one, two}) check_equal(read_file(path, opt, cap), expected);
  std::filesystem::remove(path);
  return expected;
}

// Rows of canonical cells: `rows` ranks of `cells` actions each.
std::string clean_rows(int rows, int cells) {
  std::string text;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cells; ++c)
      text += (c ? "," : "") + std::to_string(r) + (c % 2 ? "B" : "F") + std::to_string(c / 2);
    text += "\n";
  }
  return text;
}

}  // namespace

TEST_CASE("two threads read a clean file as one does, source map included") {
  check_same(clean_rows(8, 40));
  check_same("\xEF\xBB\xBF" + clean_rows(5, 9));  // a BOM
  std::string crlf = clean_rows(6, 7);
  for (std::size_t i = crlf.find('\n'); i != std::string::npos; i = crlf.find('\n', i + 2)) crlf.insert(i, "\r");
  check_same(crlf);
  check_same(clean_rows(6, 7) + "3F9,,,4B2,");  // idle cells, a trailing comma, no final newline
  check_same("\n\n\n\n0F0\n\n");                // blank ranks
}

TEST_CASE("two threads: what the second half holds is reported where one thread reports it") {
  const std::string rows = clean_rows(6, 12);
  check_same(rows + "0F0,\"0B0\",1X0,2F3\n" + rows);              // quoted and bad cells past the middle
  check_same(rows + "0F0, 0B0 ,1F1\n" + rows, /*lenient=*/true);  // non-canonical, accepted
  check_same(rows + "0F0,(0F1;0B0)OVERLAP_F_B\n" + rows);         // a container
  check_same(rows + rows + std::string("0F0,1B\0,1F1\n", 12));    // a NUL in the second half
  check_same(rows + rows + "1BW0\n");                             // the old names
  check_same(rows + "0B0,0W0\n" + rows + "1W0\n");                // a B then its W, no I
  check_same(rows + "0B0\n" + rows + rows + "0W0\n");             // ... the W in the second half only
  check_same(rows + rows + "1B0,1BW3\n", false, ActionDialect::Pre26);
  check_same(rows + "0X0,0X1\n" + rows + "0X2,0X3,0X4\n" + rows, false, ActionDialect::Current, 3);  // a full sink
  check_same(rows + rows + std::string(kMaxCsvRanks, '\n'));  // more rows than the limit
}

TEST_CASE("the reader gathers infer_shape's answer, by one thread and by two") {
  const std::string rows = clean_rows(6, 12);
  auto gathered = [](const Reading& r) {
    REQUIRE(r.ok);
    REQUIRE(r.shape);
    return *r.shape;
  };
  // Ranks 0-5 run stages 0-5; a later row runs stage 2 again (it stays on rank 2), and stage 9
  // (first met on that row), and microbatch 40.
  auto shape = gathered(check_same(rows + "2F0,,9F40,9B40\n" + rows));
  CHECK(shape.first == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5, kUnplaced, kUnplaced, kUnplaced, 6});
  CHECK(shape.second == 41);
  // A stage met only inside a container, past the middle and before it; idle rows.
  shape = gathered(check_same(rows + "\n,,\n" + rows + "0F0,(7F1;7B50)OVERLAP_F_B\n"));
  CHECK(shape.first == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5, kUnplaced, 14});
  CHECK(shape.second == 51);
  gathered(check_same("0F0,(7F1;7B50)OVERLAP_F_B\n" + rows + rows));
  gathered(check_same(rows + "0F0, 0B0 ,1F1\n" + rows, /*lenient=*/true));  // a non-canonical cell
  gathered(check_same(rows + rows + "1B0,1BW3\n", false, ActionDialect::Pre26));
}

TEST_CASE("two threads: a line over the limit in either half") {
  const std::string rows = clean_rows(3, 5);
  const std::string too_long = std::string((16u << 20) + 10, 'F') + "\n";
  check_same(rows + too_long + rows);  // the middle falls in it
  check_same(rows + rows + rows + rows + too_long);
}

TEST_CASE("two threads: random damage to a valid file reads as one thread reads it") {
  std::mt19937 rng(4242);
  const std::string base = clean_rows(10, 30);
  const std::string alphabet = "0123456789FBIWSENDRCVUHAOLP_();,\" \r\n";
  for (int i = 0; i < 200; ++i) {
    std::string text = base;
    for (int k = 0, n = 1 + static_cast<int>(rng() % 4); k < n; ++k) {
      const std::size_t at = rng() % text.size();
      const int what = static_cast<int>(rng() % 3);
      const char c = rng() % 16 == 0 ? '\0' : alphabet[rng() % alphabet.size()];
      if (what == 0) text[at] = c;
      if (what == 1) text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c);
      if (what == 2) text.erase(at, 1);
    }
    INFO(text);
    check_same(text, rng() % 2 == 0);
  }
}
