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
  auto doc = nlohmann::json::parse(sarif_report({sample()}, "1.2.3"));
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
        CHECK(j["helpUri"] == "docs/rules.md#" + std::string(r.id));
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
}

TEST_CASE("GitHub annotations escape properties and data") {
  std::string out = github_annotations({sample()});
  CHECK(out.find("::error file=dir/s%2Cv.csv,line=2,col=5,endColumn=13,title=ppsched send-without-recv::"
                 "1SEND_F0 has no matching 2RECV_F0, 100%25 sure%0Adir/s,v.csv:3:1: note: the receiver is here\n") !=
        std::string::npos);
  CHECK(out.find("::error file=dir/s%2Cv.csv,title=ppsched rank-count::the schedule has 3 rank(s), 4 expected\n") !=
        std::string::npos);
}

TEST_CASE("GitHub annotations stop at 10 per kind and say how many more") {
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
  CHECK(out.find("::notice title=ppsched::3 more finding(s) not annotated") != std::string::npos);
}
