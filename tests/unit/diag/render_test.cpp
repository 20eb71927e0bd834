#include "diag/render.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/catch.hpp"

using namespace ppsched;

TEST_CASE("a diagnostic renders as file:line:col, the line, a caret and notes") {
  Diagnostic d;
  d.rule = "action-syntax";
  d.loc = {"s.csv", 2, 5, {}};
  d.message = "unknown action kind 'X' in '1X0'";
  d.snippet = make_snippet("1F0,1X0,1B0", 4, 3);
  d.notes.push_back({{}, "kinds are F, B, I, W", {}});
  CHECK(render_text(d) ==
        "s.csv:2:5: error: unknown action kind 'X' in '1X0' [action-syntax]\n"
        "1F0,1X0,1B0\n"
        "    ^~~\n"
        "note: kinds are F, B, I, W\n");
}

TEST_CASE("a JSON location shows the path, colour only when asked") {
  Diagnostic d;
  d.severity = Severity::Warning;
  d.rule = "json-schema";
  d.loc = {"s.json", 0, 0, "$.foo"};
  d.message = "unknown key 'foo' ignored";
  CHECK(render_text(d) == "s.json: warning: $.foo: unknown key 'foo' ignored [json-schema]\n");
  CHECK(render_text(d, {true}).find("\x1b[") != std::string::npos);
}

TEST_CASE("snippets of long lines are windows around the caret") {
  std::string line(5000, 'a');
  line.replace(3000, 3, "0X1");
  Snippet s = make_snippet(line, 3001, 1);
  CHECK(s.text.size() <= 106);
  CHECK(s.text.starts_with("..."));
  CHECK(s.text.ends_with("..."));
  CHECK(s.text.substr(s.caret, 1) == "X");
}

TEST_CASE("snippets replace control and non-ASCII bytes so the caret lines up") {
  Snippet s = make_snippet(std::string("\xC3\xA9\x01,0X1", 7), 5, 1);
  CHECK(s.text == "???,0X1");
  CHECK(s.caret == 5);
}

TEST_CASE("the sink caps errors and counts what it dropped") {
  DiagnosticSink sink(2);
  for (int i = 0; i < 5; ++i) sink.report(Diagnostic{});
  CHECK(sink.error_count() == 2);
  CHECK(sink.dropped_errors() == 3);
  CHECK(sink.full());
  CHECK(render_text(sink).ends_with("note: 3 more error(s) not shown\n"));
}

TEST_CASE("a hostile file name and source line never start a workflow command, and the caret follows") {
  Diagnostic d;
  d.rule = "action-syntax";
  d.loc = {"::add-mask::s.csv", 1, 5, {}};
  d.message = "'::x' is \x1b[2Jnot an action";
  d.snippet = Snippet{"::a,::x,##[g]", 4, 3};
  const std::string text = render_text(d);
  CHECK(text ==
        "./::add-mask::s.csv:1:5: error: '::x' is \\x1B[2Jnot an action [action-syntax]\n"
        "\\x3A:a,::x,##\\x5Bg]\n"
        "       ^~~\n");
  Diagnostic w = d;
  w.snippet = Snippet{"##[x", 2, 2};  // the caret on an escaped byte spans its escape
  CHECK(render_text(w).find("##\\x5Bx\n  ^~~~~\n") != std::string::npos);
}

// The problem matcher of docs/github/ppsched-matcher.json turns each line of validate's text
// output that reads as a finding into an annotation: a source line of the user's must not read so.
TEST_CASE("an echoed source line that reads as a finding is not taken by the problem matcher") {
  std::ifstream in(std::string(PPSCHED_SOURCE_DIR) + "/docs/github/ppsched-matcher.json");
  REQUIRE(in);
  const auto matcher = nlohmann::json::parse(in);
  const std::regex finding(matcher["problemMatcher"][0]["pattern"][0]["regexp"].get<std::string>());
  Diagnostic d;
  d.rule = "csv-syntax";
  d.loc = {"s.csv", 3, 1, {}};
  d.message = "a row is not a list of actions";
  d.snippet = Snippet{"evil.csv:9:9: error: forged finding [rank-count],x:1:1: warning: more [deadlock]", 0, 4};
  const std::string text = render_text(d);
  std::istringstream lines(text);
  std::string line;
  std::vector<std::string> matched;
  while (std::getline(lines, line))
    if (std::regex_search(line, finding)) matched.push_back(line);
  REQUIRE(matched.size() == 1);  // ppsched's own finding only
  CHECK(matched[0].rfind("s.csv:3:1: error: ", 0) == 0);
  CHECK(text.find("evil.csv:9:9: error\\x3A forged finding [rank-count],x:1:1: warning\\x3A more") !=
        std::string::npos);
}
