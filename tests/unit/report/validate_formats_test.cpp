// SARIF and GitHub annotation faces of `validate`. The SARIF structure is checked against what
// GitHub code scanning requires (conventions.md section 3); Debian ships no copy of the SARIF
// 2.1.0 JSON schema to validate against offline.
#include "report/validate_formats.hpp"

#include <nlohmann/json.hpp>

#include "check/check.hpp"
#include "support/catch.hpp"

using namespace ppsched;

namespace {
FileDiagnostics sample() {
  Diagnostic d;
  d.rule = "send-without-recv";
  d.loc = {"s.csv", 2, 5, {}};
  d.message = "1SEND_F0 has no matching 2RECV_F0, 100% sure";
  d.snippet.length = 8;
  d.notes.push_back({{"s.csv", 3, 1, {}}, "the receiver is here", {}});
  Diagnostic whole;
  whole.rule = "rank-count";
  whole.loc.file = "s.csv";
  whole.message = "the schedule has 3 rank(s), 4 expected";
  return {"dir/s,v.csv", {d, whole}};
}
}  // namespace

TEST_CASE("SARIF has every rule, stable ids, and a location on every result") {
  SarifOptions opt;
  opt.version = "1.2.3";
  auto doc = nlohmann::json::parse(sarif_report({sample()}, opt));
  CHECK(doc["version"] == "2.1.0");
  const auto& run = doc["runs"][0];
  CHECK(run["tool"]["driver"]["name"] == "ppsched");
  CHECK(run["tool"]["driver"]["semanticVersion"] == "1.2.3");
  const auto& rules = run["tool"]["driver"]["rules"];
  for (const Rule& r : ppsched::rules()) {
    bool found = false;
    for (const auto& j : rules)
      if (j["id"] == r.id) {
        found = true;
        // Absolute, or code scanning's links lead nowhere.
        CHECK(j["helpUri"] == std::string(kDocsBaseUrl) + "rules.md#" + std::string(r.id));
        CHECK_FALSE(j["help"]["text"].get<std::string>().empty());
        CHECK_FALSE(j["shortDescription"]["text"].get<std::string>().empty());
        CHECK(j["fullDescription"]["text"].get<std::string>().size() <= 1000);
      }
    CHECK(found);
  }
  const auto& results = run["results"];
  REQUIRE(results.size() == 2);
  CHECK(results[0]["ruleId"] == "send-without-recv");
  CHECK(rules[results[0]["ruleIndex"].get<std::size_t>()]["id"] == "send-without-recv");
  const auto& region = results[0]["locations"][0]["physicalLocation"]["region"];
  CHECK(region["startLine"] == 2);
  CHECK(region["startColumn"] == 5);
  CHECK(region["endColumn"] == 13);  // one past the 8-byte cell
  CHECK(results[0]["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] == 3);
  // A whole-file finding still gets line 1, or GitHub does not display it.
  CHECK(results[1]["locations"][0]["physicalLocation"]["region"]["startLine"] == 1);
  CHECK(results[1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "dir/s,v.csv");
  CHECK_FALSE(results[1]["locations"][0]["physicalLocation"]["artifactLocation"].contains("uriBaseId"));
}

TEST_CASE("SARIF: links under the docs URL asked for, paths relative to the source root") {
  FileDiagnostics inside = sample();
  inside.file = "/ci/repo/schedules/s.csv";
  FileDiagnostics outside = sample();
  outside.file = "/elsewhere/s.csv";
  FileDiagnostics relative = sample();
  relative.file = "./schedules/t.csv";
  SarifOptions opt{"1.2.3", "https://docs.example.org/ppsched/", "/ci/repo"};
  auto doc = nlohmann::json::parse(sarif_report({inside, outside, relative}, opt));
  const auto& run = doc["runs"][0];
  CHECK(run["tool"]["driver"]["informationUri"] == "https://docs.example.org/ppsched/manual.md");
  for (const auto& rule : run["tool"]["driver"]["rules"])
    CHECK(rule["helpUri"].get<std::string>().rfind("https://docs.example.org/ppsched/", 0) == 0);
  auto where = [&](std::size_t i) { return run["results"][i]["locations"][0]["physicalLocation"]["artifactLocation"]; };
  CHECK(where(0)["uri"] == "schedules/s.csv");
  CHECK(where(0)["uriBaseId"] == "%SRCROOT%");
  CHECK(where(2)["uri"] == "file:///elsewhere/s.csv");  // an absolute path is a file:// URI
  CHECK_FALSE(where(2).contains("uriBaseId"));
  CHECK(where(4)["uri"] == "schedules/t.csv");
  CHECK(where(4)["uriBaseId"] == "%SRCROOT%");
}

TEST_CASE("GitHub annotations escape properties and data") {
  std::string out = github_annotations({sample()});
  CHECK(out.find("::error file=dir/s%2Cv.csv,line=2,col=5,endColumn=13,title=ppsched send-without-recv::"
                 "1SEND_F0 has no matching 2RECV_F0, 100%25 sure%0Adir/s,v.csv:3:1: note: the receiver is here\n") !=
        std::string::npos);
  CHECK(out.find("::error file=dir/s%2Cv.csv,title=ppsched rank-count::the schedule has 3 rank(s), 4 expected\n") !=
        std::string::npos);
}

TEST_CASE("GitHub annotations stop at 10 per kind, the rest follow as plain lines, and all are in the step summary") {
  FileDiagnostics many{"s.csv", {}};
  for (int i = 0; i < 13; ++i) {
    Diagnostic d;
    d.rule = "duplicate-action";
    d.loc = {"s.csv", static_cast<std::uint32_t>(i + 1), 1, {}};
    d.message = "dup";
    many.diagnostics.push_back(d);
  }
  std::string out = github_annotations({many});
  std::size_t errors = 0;
  for (std::size_t p = out.find("::error"); p != std::string::npos; p = out.find("::error", p + 1)) ++errors;
  CHECK(errors == 10);
  CHECK(out.find("::notice title=ppsched::3 more finding(s) follow as plain lines") != std::string::npos);
  // Nothing is lost: lines 11 to 13 are in the log as the text format prints them.
  for (int line = 11; line <= 13; ++line)
    CHECK(out.find("s.csv:" + std::to_string(line) + ":1: error: dup [duplicate-action]") != std::string::npos);
  CHECK(out.find("s.csv:10:1: error") == std::string::npos);  // annotated, not repeated
  const std::string summary = github_step_summary({many, FileDiagnostics{"clean.csv", {}}});
  CHECK(summary.rfind(
            "### ppsched validate\n\n2 files checked, 1 with findings: 13 error(s), 0 warning(s), 0 note(s)\n", 0) ==
        0);
  std::size_t rows = 0;
  for (std::size_t p = summary.find("\n| s.csv |"); p != std::string::npos; p = summary.find("\n| s.csv |", p + 1))
    ++rows;
  CHECK(rows == 13);
  CHECK(summary.find("| s.csv | 13 | 1 | error | duplicate-action | dup |") != std::string::npos);
  // Over GitHub's 1 MiB, rows stop and the count of the rest is said.
  const std::string small = github_step_summary({many}, 600);
  CHECK(small.size() <= 600);
  CHECK(small.find("more finding(s) left out here") != std::string::npos);
}

TEST_CASE("GitHub step summary: cells keep the table's shape") {
  Diagnostic d;
  d.rule = "x";
  d.loc = {"a|b.csv", 1, 1, {}};
  d.message = "one | two\nthree";
  const std::string summary = github_step_summary({FileDiagnostics{"a|b.csv", {d}}});
  CHECK(summary.find("| a\\|b.csv | 1 | 1 | error | x | one \\| two<br>three |") != std::string::npos);
}

TEST_CASE("SARIF: artifact URIs are percent-encoded (RFC 3986), relative and absolute") {
  FileDiagnostics spaced = sample(), absolute = sample(), colon = sample();
  spaced.file = "/ci/repo/a b#c.csv";
  absolute.file = "/tmp/x?y/50%.csv";
  colon.file = "::add-mask::s\x1b.csv";
  auto doc =
      nlohmann::json::parse(sarif_report({spaced, absolute, colon}, SarifOptions{"1", kDocsBaseUrl, "/ci/repo"}));
  auto where = [&](std::size_t i) {
    return doc["runs"][0]["results"][i]["locations"][0]["physicalLocation"]["artifactLocation"];
  };
  CHECK(where(0)["uri"] == "a%20b%23c.csv");
  CHECK(where(0)["uriBaseId"] == "%SRCROOT%");
  CHECK(where(2)["uri"] == "file:///tmp/x%3Fy/50%25.csv");
  CHECK(where(4)["uri"] == "%3A%3Aadd-mask%3A%3As%1B.csv");
}

TEST_CASE("docs_url_problem: only a plain absolute http(s) base is taken as --docs-url") {
  CHECK(docs_url_problem(kDocsBaseUrl).empty());
  CHECK(docs_url_problem("https://git.example.org/ppsched/-/blob/main/docs/").empty());
  CHECK(docs_url_problem("http://10.0.0.1:8080/docs/").empty());
  CHECK(docs_url_problem("https://[::1]:8443/docs/").empty());
  const std::pair<const char*, const char*> refused[] = {
      {"ftp://x.org/docs/", "not an absolute http(s) URL"},
      {"https://x.org/docs", "must end with '/'"},
      {"https://x.org", "must end with '/'"},
      {"https://x.org/a b/", "a blank"},
      {"https://x.org/a\nb/", "a control character"},
      {"https://x.org/\"onmouseover=\"/", "holds '\"'"},
      {"https://x.org/<script>/", "holds '<'"},
      {"https://user@x.org/docs/", "names a user"},
      {"https:///docs/", "no host"},
      {"https://-x.org/docs/", "host is malformed"},
      {"https://x_y.org/docs/", "only letters, digits"},
      {"https://x.org:http/docs/", "port is not a number"},
      {"https://x.org/docs/?q=1/", "no query or fragment"},
      {"https://x.org/d\xc3\xa9/", "not ASCII"},
  };
  for (const auto& [url, why] : refused) {
    INFO(url);
    const std::string problem = docs_url_problem(url);
    CHECK(problem.find(why) != std::string::npos);
  }
}

TEST_CASE("GitHub annotations and the step summary carry no command, escape or markup from the user") {
  Diagnostic d;
  d.rule = "action-syntax";
  d.loc = {"::add-mask::s.csv", 1, 1, {}};
  d.message = "'::stop-commands::t\x1b[2J' <img src=x> `code` [a](http://e.org) *b*";
  FileDiagnostics f{"::add-mask::s.csv", {d}};
  const std::string out = github_annotations({f});
  CHECK(out ==
        "::error file=%3A%3Aadd-mask%3A%3As.csv,line=1,col=1,endColumn=2,title=ppsched action-syntax::"
        "'::stop-commands::t\\x1B[2J' <img src=x> `code` [a](http://e.org) *b*\n");
  // Past the 10 per kind the findings are plain lines: none starts a command.
  FileDiagnostics many{"::error title=x::s.csv", {}};
  for (int i = 0; i < 12; ++i) {
    Diagnostic e = d;
    e.loc.file = many.file;
    many.diagnostics.push_back(e);
  }
  const std::string rest = github_annotations({many});
  CHECK(rest.find("\n./::error title=x::s.csv:1:1: error: ") != std::string::npos);
  CHECK(rest.find("\n::error title=x") == std::string::npos);
  const std::string summary = github_step_summary({f});
  CHECK(summary.find("| \\&#58;\\&#58;add-mask") == std::string::npos);  // sanity of the expectation below
  CHECK(summary.find("| &#58;&#58;add-mask&#58;&#58;s.csv | 1 | 1 | error | action-syntax | "
                     "'&#58;&#58;stop-commands&#58;&#58;t\\\\x1B\\[2J' &lt;img src=x&gt; \\`code\\` "
                     "\\[a\\](http&#58;//e.org) \\*b\\* |") != std::string::npos);
  CHECK(summary.find('<') == summary.find("<br>"));  // no raw HTML: the only '<' would be ppsched's <br>
}

TEST_CASE("SARIF: a run stopped by an error keeps its results and says so in the invocation") {
  SarifOptions opt;
  auto clean = nlohmann::json::parse(sarif_report({sample()}, opt));
  CHECK_FALSE(clean["runs"][0].contains("invocations"));  // a run that finished says nothing
  opt.tool_errors = {"spec.json:3:12: error: $.stages: the stage spec describes 2 stages"};
  auto doc = nlohmann::json::parse(sarif_report({sample()}, opt));
  const auto& run = doc["runs"][0];
  CHECK(run["results"].size() == 2);  // what was checked before the error
  REQUIRE(run["invocations"].size() == 1);
  CHECK(run["invocations"][0]["executionSuccessful"] == false);
  const auto& notes = run["invocations"][0]["toolExecutionNotifications"];
  REQUIRE(notes.size() == 1);
  CHECK(notes[0]["level"] == "error");
  CHECK(notes[0]["message"]["text"] == opt.tool_errors[0]);
}
