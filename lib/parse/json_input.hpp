// A small JSON input file (a topology, a stage spec) whose schema errors point at the value:
// file:line:col where the path can be found in the text (json_locate.hpp), else file and path.
// Checks what every such file starts with: a JSON object with "schema_version": 1.
//
// Internal to lib/parse: the readers of those formats (topology_json.cpp, stage_spec_json.cpp)
// share it; nothing outside this folder includes it.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "diag/diagnostic.hpp"

namespace ppsched {

class JsonInput {
 public:
  /// A file ("-" for standard input), read on load(); its errors carry rule id `rule`.
  JsonInput(std::string path, std::string rule, DiagnosticSink& sink);
  /// Text already in memory, reported as `name`.
  JsonInput(std::string_view name, std::string_view text, std::string rule, DiagnosticSink& sink);

  /// Reads and parses the input; false (with the error reported) when it cannot be read, is not
  /// JSON, is not an object, or has no "schema_version": 1.
  bool load(nlohmann::json& doc);

  /// Reports `message` at the JSON path `at` ("$.links.inter_node").
  void error(const std::string& at, std::string message);

 private:
  std::string path_, name_, rule_, text_;
  bool loaded_ = false;
  DiagnosticSink& sink_;
};

/// Reads `obj[key]` into `out`: a finite number >= 0 (> 0 when `positive`). A missing key is an
/// error only when `required` (then `out` keeps its value). Reports at `at` and returns false
/// on any error.
bool read_json_number(JsonInput& f, const nlohmann::json& obj, const std::string& at, const char* key, double& out,
                      bool required, bool positive);

}  // namespace ppsched
