// validate's JSON face (report/validate_json.cpp): the document's shape, key order and values for
// a file with findings and notes, a JSON file's path, and an unreadable file.
#include "report/validate_json.hpp"

#include <nlohmann/json.hpp>

#include "support/catch.hpp"

using namespace ppsched;

namespace {

FileDiagnostics sample() {
  FileDiagnostics f;
  f.file = "w.csv";
  Diagnostic d;
  d.rule = "weight-before-input-grad";
  d.loc = {"w.csv", 1, 13, {}};
  d.message = "0W1 runs before 0I1";
  d.notes.push_back({{"w.csv", 1, 17, {}}, "the input-gradient pass is here", {}});
  Diagnostic n;
  n.severity = Severity::Note;
  n.rule = "first-stage-input-grad";
  n.loc = {"w.csv", 1, 9, {}};
  n.message = "0I0 is on the first stage";
  f.diagnostics = {d, n};
  f.errors = 1;
  f.inferred = {{"2 microbatches (the highest used)", {"--microbatches"}}};
  return f;
}

}  // namespace

TEST_CASE("validate json: one document, a file per entry, its counts, notes and diagnostics in order") {
  FileDiagnostics json_file;
  json_file.file = "s.json";
  json_file.readable = false;
  Diagnostic bad;
  bad.rule = "json-schema";
  bad.loc = {"s.json", 4, 7, "$.programs[1][0]"};
  bad.message = "not an action";
  json_file.diagnostics = {bad};
  json_file.errors = 1;

  CHECK(validate_json({sample(), json_file}) == R"json({
  "schema_version": 1,
  "tool": "ppsched validate",
  "files": [
    {
      "file": "w.csv",
      "readable": true,
      "errors": 1,
      "warnings": 0,
      "notes": [
        "2 microbatches (the highest used)"
      ],
      "diagnostics": [
        {
          "rule": "weight-before-input-grad",
          "severity": "error",
          "message": "0W1 runs before 0I1",
          "file": "w.csv",
          "line": 1,
          "column": 13,
          "notes": [
            {
              "message": "the input-gradient pass is here",
              "line": 1,
              "column": 17
            }
          ]
        },
        {
          "rule": "first-stage-input-grad",
          "severity": "note",
          "message": "0I0 is on the first stage",
          "file": "w.csv",
          "line": 1,
          "column": 9,
          "notes": []
        }
      ]
    },
    {
      "file": "s.json",
      "readable": false,
      "errors": 1,
      "warnings": 0,
      "notes": [],
      "diagnostics": [
        {
          "rule": "json-schema",
          "severity": "error",
          "message": "not an action",
          "file": "s.json",
          "line": 4,
          "column": 7,
          "path": "$.programs[1][0]",
          "notes": []
        }
      ]
    }
  ]
}
)json");
}

TEST_CASE("validate json: no files is an empty list") {
  const auto doc = nlohmann::json::parse(validate_json({}));
  CHECK(doc["files"] == nlohmann::json::array());
  CHECK(doc["schema_version"] == 1);
}

TEST_CASE("validate json: a run stopped by an error keeps the files checked and lists the error") {
  auto finished = nlohmann::json::parse(validate_json({sample()}));
  CHECK_FALSE(finished.contains("tool_errors"));
  auto doc = nlohmann::json::parse(validate_json({sample()}, {"--schedule: unknown schedule 'ZBX'"}));
  CHECK(doc["files"].size() == 1);
  REQUIRE(doc["tool_errors"].size() == 1);
  CHECK(doc["tool_errors"][0] == "--schedule: unknown schedule 'ZBX'");
}
