// A small JSON input file (a topology, a stage spec, a model, runtime parameters, a JSON cost
// table) whose errors point at the value: file:line:col where the path can be found in the text
// (json_locate.hpp), else file and path. Checks what every such file starts with: a JSON object
// with "schema_version": 1.
//
// The one rule for every JSON input of ppsched (the JSON schedule reader, json_schedule.cpp,
// follows it with its own streaming parser and shares the helpers below):
//   - a syntax error is reported at the exact file:line:col where the parser stopped;
//   - a UTF-8 byte order mark at the start is skipped;
//   - a key given twice in one object is an error at its second place, with a note at the first
//     (which one was meant would be a guess);
//   - a key the format does not define is an error, with "did you mean" when one is close (a
//     misspelt key would otherwise leave a value at its default without a word);
//   - a value of the wrong type is an error at its place.
//
// Internal to lib/parse: the readers of those formats share it; nothing outside this folder
// includes it.
#pragma once

#include <cstddef>
#include <span>
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
  /// JSON, has a duplicate key, is not an object, or has no "schema_version": 1.
  bool load(nlohmann::json& doc);

  /// Reports `message` at the JSON path `at` ("$.links.inter_node").
  void error(const std::string& at, std::string message);

  /// Reports every key of `obj` (found at path `at`) that is not in `keys`, as an error with
  /// "did you mean" when a known key is close. False when there was one.
  bool known_keys(const nlohmann::json& obj, const std::string& at, std::span<const std::string_view> keys);

  /// Reports a value of the wrong type: "\"key\" must be WHAT, got TYPE" at `at`.
  void wrong_type(const std::string& at, const nlohmann::json& value, std::string_view what);

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

/// The message for a key `key` that is not one of `keys`: "unknown key 'k'; did you mean 'x'?"
/// when one is close, else "unknown key 'k' (the keys here are a, b, c)".
std::string unknown_key_message(std::string_view key, std::span<const std::string_view> keys);

/// 1-based line and column of byte `offset` of `text`.
std::pair<std::uint32_t, std::uint32_t> json_line_col(std::string_view text, std::size_t offset);
/// The line of `text` that holds byte `offset`, without its newline.
std::string_view json_line_at(std::string_view text, std::size_t offset);

/// The diagnostic for text nlohmann-json could not parse. `byte` is where the parser stopped
/// (1-based, as nlohmann counts: the byte after the last one read) and `last_token` the token it
/// stopped on: the caret goes on the token's first byte. A number too large for a double
/// ("1e999") is pointed at as a literal.
Diagnostic json_syntax_diagnostic(std::string_view name, std::string_view text, const nlohmann::json::exception& e,
                                  std::size_t byte, std::string_view last_token, std::string rule);

/// Parses `text` into `doc`; on a syntax error reports it (json_syntax_diagnostic) and returns
/// false. A UTF-8 byte order mark is skipped.
bool parse_json_text(std::string_view name, std::string_view text, const std::string& rule, nlohmann::json& doc,
                     DiagnosticSink& sink);

/// Reports the first key given twice in one object of `text` (valid JSON), at its second place
/// with a note at the first; false when there was one.
bool check_duplicate_keys(std::string_view name, std::string_view text, const std::string& rule, DiagnosticSink& sink);

}  // namespace ppsched
