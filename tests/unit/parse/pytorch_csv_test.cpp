#include "parse/pytorch_csv.hpp"

#include <random>
#include <regex>

#include "diag/render.hpp"
#include "ir/action_text.hpp"
#include "support/catch.hpp"

using namespace ppsched;

namespace {

std::optional<ParsedSchedule> parse(std::string_view text, bool lenient = false, DiagnosticSink* out_sink = nullptr) {
  DiagnosticSink local;
  DiagnosticSink& sink = out_sink ? *out_sink : local;
  return read_pytorch_csv_text("s.csv", text, {lenient}, sink);
}

// The first diagnostic of a strict parse, rendered as the user sees it.
std::string first_error(std::string_view text, bool lenient = false) {
  DiagnosticSink sink;
  auto parsed = read_pytorch_csv_text("s.csv", text, {lenient}, sink);
  REQUIRE_FALSE(parsed);
  REQUIRE_FALSE(sink.diagnostics().empty());
  return render_text(sink.diagnostics().front());
}

constexpr const char* kGrammarNote =
    "note: an action is <stage><KIND>[<microbatch>], e.g. '2F0', '1SEND_B3', '0UNSHARD', or "
    "'(0F7;7B3)OVERLAP_F_B'; an empty cell is an idle step\n";

}  // namespace

TEST_CASE("rows are ranks, ragged, with idle cells and blank lines") {
  auto p = parse("0F0,,0B0\r\n\r\n1F0\r\n");
  REQUIRE(p);
  const Schedule& s = p->schedule;
  REQUIRE(s.rank_count() == 3);
  CHECK(s.ranks[0].actions.size() == 3);
  CHECK(s.ranks[0].actions[1].is_idle());
  CHECK(s.ranks[1].actions.empty());
  CHECK(s.ranks[2].actions == std::vector<Action>{Action::make(ActionKind::F, 1, 0)});
  CHECK(p->source.line(2) == 3);
  CHECK(p->source.column(0, 2) == 6);
  CHECK(s.num_stages == 0);  // a CSV file does not state it
  CHECK(s.placement.style == PlacementStyle::Unspecified);
}

TEST_CASE("LF, CRLF, a BOM and a missing final newline read the same") {
  const std::string expected = "0F0,0B0\r\n1F0,1B0\r\n";
  for (std::string text : {"0F0,0B0\n1F0,1B0\n", "0F0,0B0\r\n1F0,1B0\r\n", "0F0,0B0\n1F0,1B0",
                           "\xEF\xBB\xBF"
                           "0F0,0B0\r\n1F0,1B0"}) {
    auto p = parse(text);
    REQUIRE(p);
    CHECK(to_pytorch_csv(p->schedule) == expected);
  }
}

TEST_CASE("an empty file is a schedule with no ranks") {
  auto p = parse("");
  REQUIRE(p);
  CHECK(p->schedule.rank_count() == 0);
  CHECK(to_pytorch_csv(p->schedule).empty());
}

TEST_CASE("a trailing comma is a trailing idle cell, as in Python's csv") {
  auto p = parse("0F0,\n,\n");
  REQUIRE(p);
  CHECK(p->schedule.ranks[0].actions.size() == 2);
  CHECK(p->schedule.ranks[1].actions.size() == 2);
  CHECK(to_pytorch_csv(p->schedule) == "0F0,\r\n,\r\n");
}

TEST_CASE("RFC 4180 quoted cells are unquoted") {
  auto p = parse("\"0F0\",\"\",\"(0F1;1B0)OVERLAP_F_B\"\n");
  REQUIRE(p);
  CHECK(to_pytorch_csv(p->schedule) == "0F0,,(0F1;1B0)OVERLAP_F_B\r\n");
}

TEST_CASE("a row holding one idle cell is written as Python writes it") {
  auto p = parse("\"\"\n0F0\n");
  REQUIRE(p);
  REQUIRE(p->schedule.ranks[0].actions.size() == 1);
  CHECK(p->schedule.ranks[0].actions[0].is_idle());
  CHECK(to_pytorch_csv(p->schedule) == "\"\"\r\n0F0\r\n");
  CHECK(to_pytorch_csv(p->schedule, {LineEnding::Lf}) == "\"\"\n0F0\n");
}

TEST_CASE("lenient mode warns once per non-canonical cell and caps the list") {
  std::string row;
  for (int i = 0; i < 25; ++i) row += (i ? "," : "") + std::string("00F") + std::to_string(i);
  DiagnosticSink sink;
  auto p = read_pytorch_csv_text("s.csv", row, {true, 10}, sink);
  REQUIRE(p);
  CHECK(sink.warning_count() == 11);
  CHECK(sink.diagnostics().back().message == "15 more non-canonical cell(s) not shown");
  CHECK(p->schedule.ranks[0].actions[24] == Action::make(ActionKind::F, 0, 24));
}

TEST_CASE("errors: each malformed cell or line with its exact message and caret") {
  struct Case {
    const char* input;
    std::string expected;
  };
  const Case cases[] = {
      {"0F0,0X1\n",
       "s.csv:1:6: error: unknown action kind 'X' in '0X1' [action-syntax]\n0F0,0X1\n     ^\n"
       "note: action kinds are F, B, I, W, SEND_F, RECV_F, SEND_B, RECV_B, UNSHARD, RESHARD, "
       "REDUCE_GRAD and OVERLAP_F_B\n" +
           std::string(kGrammarNote)},
      {"0F0\n1SEND_X0\n",
       "s.csv:2:2: error: unknown action kind 'SEND_X' in '1SEND_X0'; did you mean 'SEND_F'? "
       "[action-syntax]\n1SEND_X0\n ^~~~~~\n" +
           std::string(kGrammarNote)},
      {"F0\n",
       "s.csv:1:1: error: missing stage index before 'F0' [action-syntax]\nF0\n^\n" + std::string(kGrammarNote)},
      {"0f0\n",
       "s.csv:1:2: error: action kinds are upper case: did you mean '0F0'? [action-syntax]\n"
       "0f0\n ^\n" +
           std::string(kGrammarNote)},
      {"(0F0;1B0)FOO\n",
       "s.csv:1:10: error: unknown computation type 'FOO' after ')' [action-syntax]\n"
       "(0F0;1B0)FOO\n         ^~~\nnote: action kinds are F, B, I, W, SEND_F, RECV_F, SEND_B, "
       "RECV_B, UNSHARD, RESHARD, REDUCE_GRAD and OVERLAP_F_B\n" +
           std::string(kGrammarNote)},
      {"((0F0;1B0)OVERLAP_F_B;2F0)OVERLAP_F_B\n",
       "s.csv:1:2: error: nested '(' in '((0F0;1B0)OVERLAP_F_B;2F0)OVERLAP_F_B': a container holds "
       "plain actions, e.g. '(0F7;7B3)OVERLAP_F_B' [action-syntax]\n"
       "((0F0;1B0)OVERLAP_F_B;2F0)OVERLAP_F_B\n ^\n" +
           std::string(kGrammarNote)},
      {"0F0x\n",
       "s.csv:1:4: error: unexpected 'x' after action '0F0' [action-noncanonical]\n0F0x\n   ^\n"
       "note: PyTorch reads this cell as '0F0'; write it that way, or pass --lenient to accept it\n"},
      {"00F01\n",
       "s.csv:1:1: error: leading zero in stage index '00' [action-noncanonical]\n00F01\n^~\n"
       "note: PyTorch reads this cell as '0F1'; write it that way, or pass --lenient to accept it\n"},
      {"0F0, 1F0\n",
       "s.csv:1:5: error: whitespace around action '1F0' [action-noncanonical]\n0F0, 1F0\n    ^\n"
       "note: PyTorch reads this cell as '1F0'; write it that way, or pass --lenient to accept it\n"},
      {"0BW0\n",
       "s.csv:1:1: error: '0BW0': this file uses the action names of PyTorch before 2.6, where B was the "
       "input-gradient backward and BW the full backward (PyTorch 2.6 calls them I and B); pass --dialect pre-2.6 to "
       "read it so, and `ppsched compile --dialect pre-2.6 FILE -o NEW` writes it in today's names "
       "[action-dialect]\n0BW0\n^~~~\n"},
      {"0UNSHARD3\n",
       "s.csv:1:9: error: UNSHARD takes no microbatch index: '0UNSHARD3' [action-noncanonical]\n"
       "0UNSHARD3\n        ^\n"
       "note: PyTorch reads this cell as '0UNSHARD3', which is not a valid action either; pass --lenient "
       "to accept it as PyTorch does\n"},
      {"2W\n",
       "s.csv:1:2: error: '2W' has no microbatch index; W needs one, e.g. '2W0' [action-noncanonical]\n"
       "2W\n ^\n"
       "note: PyTorch reads this cell as '2W', which is not a valid action either; pass --lenient "
       "to accept it as PyTorch does\n"},
      {"()OVERLAP_F_B\n",
       "s.csv:1:1: error: container '()OVERLAP_F_B' has no sub-actions [action-noncanonical]\n"
       "()OVERLAP_F_B\n^~~~~~~~~~~~~\n"
       "note: PyTorch reads this cell as '-1OVERLAP_F_B', which is not a valid action either; pass --lenient "
       "to accept it as PyTorch does\n"},
      {"0F99999999999\n",
       "s.csv:1:3: error: microbatch index 99999999999 is beyond ppsched's limit of 4294967294 "
       "[action-limit]\n0F99999999999\n  ^~~~~~~~~~~\n" +
           std::string(kGrammarNote)},
      {"0F0,\"1F0\n",
       "s.csv:1:5: error: unterminated quoted cell (a quoted cell cannot span lines) [csv-syntax]\n"
       "0F0,\"1F0\n    ^\n"},
      {"\"0F0\"x\n",
       "s.csv:1:6: error: unexpected text after the closing quote of a quoted cell [csv-syntax]\n"
       "\"0F0\"x\n     ^\n"},
  };
  for (const Case& c : cases) {
    INFO(c.input);
    CHECK(first_error(c.input) == c.expected);
  }
}

TEST_CASE("errors: a NUL byte is reported at its line and column") {
  std::string text("0F0\n1F0,1B\0,1F1\n", 16);
  CHECK(first_error(text) ==
        "s.csv:2:7: error: NUL byte in input: a schedule CSV is text [csv-syntax]\n1F0,1B\n      ^\n");
}

TEST_CASE("errors: a line longer than 16 MiB is refused, not read") {
  std::string text = "0F0\n" + std::string((16u << 20) + 10, 'F') + "\n";
  CHECK(first_error(text) ==
        "s.csv:2:1: error: line is longer than 16 MiB, ppsched's limit for one rank's row [csv-limit]\n");
}

TEST_CASE("errors: more rows than the rank limit") {
  std::string text(kMaxCsvRanks + 1, '\n');
  CHECK(first_error(text).starts_with("s.csv:65537:1: error: more than 65536 rows"));
}

TEST_CASE("errors: every bad cell is reported, up to the sink's cap, and the stop is said") {
  DiagnosticSink sink(3);
  std::string text = "0X0,0X1,0X2,0X3,0X4\n0X5\n";
  CHECK_FALSE(read_pytorch_csv_text("s.csv", text, {}, sink));
  CHECK(sink.error_count() == 3);
  CHECK(sink.diagnostics()[2].loc.column == 10);  // the X of the third cell
  REQUIRE(sink.diagnostics().size() == 4);
  CHECK(render_text(sink.diagnostics()[3]) == "s.csv:1: note: too many errors; stopped reading here\n");
}

TEST_CASE("errors: a 'BW' that is not the old spelling is ordinary trailing text") {
  CHECK(first_error("1BWD0\n").starts_with("s.csv:1:3: error: unexpected 'WD0' after action '1B'"));
}

TEST_CASE("random bytes never crash or hang the reader") {
  std::mt19937 rng(12345);
  const std::string alphabet = "0123456789FBIWSENDRCVUHAOLP_();,\"\r\n \t\x00\xff";
  for (int i = 0; i < 3000; ++i) {
    std::string text;
    std::size_t len = rng() % 200;
    for (std::size_t k = 0; k < len; ++k)
      text += (rng() % 4 == 0) ? static_cast<char>(rng() % 256) : alphabet[rng() % alphabet.size()];
    for (bool lenient : {false, true}) {
      DiagnosticSink sink;
      auto p = read_pytorch_csv_text("fuzz.csv", text, {lenient}, sink);
      // Either a schedule without errors, or errors and no schedule.
      CHECK(p.has_value() == !sink.has_errors());
      if (p) {
        // Whatever parsed must print back to something that parses to the same schedule.
        DiagnosticSink again;
        auto q = read_pytorch_csv_text("again.csv", to_pytorch_csv(p->schedule), {true}, again);
        REQUIRE(q);
        CHECK(same_schedule(p->schedule, q->schedule));
      }
    }
  }
}

TEST_CASE("read_pytorch_csv reports an unreadable file as an io-error") {
  DiagnosticSink sink;
  CHECK_FALSE(read_pytorch_csv("/nonexistent/s.csv", {}, sink));
  REQUIRE(sink.error_count() == 1);
  CHECK(sink.diagnostics()[0].rule == "io-error");
  CHECK(render_text(sink.diagnostics()[0]) ==
        "/nonexistent/s.csv: error: cannot open: No such file or directory [io-error]\n");
}

TEST_CASE("dialect pre-2.6 reads PyTorch's names from before 2.6: B as I, BW as B") {
  DiagnosticSink sink;
  CsvReadOptions old;
  old.dialect = ActionDialect::Pre26;
  auto p = read_pytorch_csv_text("s.csv", "0F0,1F0,1B0,1W0,0B0,0W0\n0F1,1BW1,0BW1\n", old, sink);
  REQUIRE(p);
  CHECK(sink.diagnostics().empty());
  CHECK(action_text(p->schedule.ranks[0].actions[2], p->schedule.sub_actions) == "1I0");
  CHECK(action_text(p->schedule.ranks[0].actions[3], p->schedule.sub_actions) == "1W0");
  CHECK(action_text(p->schedule.ranks[1].actions[1], p->schedule.sub_actions) == "1B1");
  CHECK(action_text(p->schedule.ranks[1].actions[2], p->schedule.sub_actions) == "0B1");
}

TEST_CASE("today's names: an old-dialect file gets one finding, not a cascade") {
  // A BW cell: certain, an error at the first one only.
  DiagnosticSink sink;
  CHECK_FALSE(read_pytorch_csv_text("s.csv", "0F0,1F0,1BW0,0BW0\n", CsvReadOptions{}, sink));
  REQUIRE(sink.diagnostics().size() == 1);
  CHECK(sink.diagnostics()[0].rule == "action-dialect");
  CHECK(sink.diagnostics()[0].loc.column == 9);
  // B then W of one microbatch and no I: likely, a warning (PyTorch's own lowering tests write
  // such files), and the file is read.
  DiagnosticSink likely;
  auto p = read_pytorch_csv_text("s.csv", "0F0,0B0,0W0\n", CsvReadOptions{}, likely);
  CHECK(p);
  REQUIRE(likely.diagnostics().size() == 1);
  CHECK(likely.diagnostics()[0].severity == Severity::Warning);
  CHECK(likely.diagnostics()[0].loc.column == 9);
  // With an I anywhere it is today's names: nothing said.
  DiagnosticSink today;
  CHECK(read_pytorch_csv_text("s.csv", "0F0,0F1,0B0,0I1,0W1\n", CsvReadOptions{}, today));
  CHECK(today.diagnostics().empty());
  // --lenient reads a BW cell as PyTorch does (a B without microbatch), with its warning.
  DiagnosticSink lenient;
  CsvReadOptions opt;
  opt.lenient = true;
  CHECK(read_pytorch_csv_text("s.csv", "0F0,0BW0\n", opt, lenient));
  CHECK(lenient.diagnostics().at(0).rule == "action-noncanonical");
}

TEST_CASE("a schedule of many chunks is written as one cell after another, in order") {
  // Over 2^17 cells (the writer's chunk) in rows of every shape: long, empty, a lone idle cell,
  // containers and idle cells, so that chunks start and end inside rows and at their edges.
  Schedule s;
  std::mt19937 rng(7);
  const std::uint32_t group =
      s.sub_actions.add(std::vector<Action>{Action::make(ActionKind::F, 1, 3), Action::make(ActionKind::B, 0, 2)});
  for (int r = 0; r < 40; ++r) {
    auto& actions = s.ranks.emplace_back().actions;
    const std::size_t n = r % 5 == 1 ? 0 : r % 5 == 2 ? 1 : rng() % 30000;
    for (std::size_t i = 0; i < n; ++i) {
      const auto roll = rng() % 100;
      actions.push_back(r % 5 == 2 || roll < 5 ? Action::idle()
                        : roll < 7             ? Action::container(ActionKind::OverlapFB, group)
                                               : Action::make(ActionKind::SendF, static_cast<std::uint16_t>(r),
                                                              static_cast<std::uint32_t>(rng() % 100000)));
    }
  }
  std::string expected;
  for (const RankProgram& rank : s.ranks) {
    if (rank.actions.size() == 1 && rank.actions[0].is_idle()) expected += "\"\"";
    for (std::size_t i = 0; i < rank.actions.size(); ++i)
      expected += (i ? "," : "") + action_text(rank.actions[i], s.sub_actions);
    expected += "\r\n";
  }
  REQUIRE(expected.size() > (std::size_t{1} << 20));
  CHECK(to_pytorch_csv(s) == expected);
  CHECK(to_pytorch_csv(s, {LineEnding::Lf}) == std::regex_replace(expected, std::regex("\r\n"), "\n"));
}
