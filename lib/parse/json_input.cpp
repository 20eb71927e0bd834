#include "parse/json_input.hpp"

#include <fmt/format.h>

#include <cmath>

#include "io/byte_sink.hpp"
#include "io/input_file.hpp"
#include "parse/io_diagnostic.hpp"
#include "parse/json_locate.hpp"

namespace ppsched {

JsonInput::JsonInput(std::string path, std::string rule, DiagnosticSink& sink)
    : path_(std::move(path)), name_(display_name(path_)), rule_(std::move(rule)), sink_(sink) {}

JsonInput::JsonInput(std::string_view name, std::string_view text, std::string rule, DiagnosticSink& sink)
    : name_(name), rule_(std::move(rule)), text_(text), loaded_(true), sink_(sink) {}

bool JsonInput::load(nlohmann::json& doc) {
  if (!loaded_) {
    try {
      text_ = read_whole_input(path_, std::size_t{1} << 28);
    } catch (const IoError& e) {
      sink_.report(io_diagnostic(e));
      return false;
    }
  }
  try {
    doc = nlohmann::json::parse(text_);
  } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number too large ("1e999")
    error("$", std::string("invalid JSON: ") + e.what());
    return false;
  }
  if (!doc.is_object()) return error("$", "expected a JSON object"), false;
  // Not doc.value(...): it throws when the key holds another type (an array, an object).
  auto version = doc.find("schema_version");
  if (version == doc.end() || !version->is_number_integer() || version->get<std::int64_t>() != 1)
    return error("$.schema_version", "schema_version must be 1"), false;
  return true;
}

void JsonInput::error(const std::string& at, std::string message) {
  Diagnostic d;
  d.rule = rule_;
  d.loc.file = name_;
  d.loc.path = at;
  if (auto off = locate_json_path(text_, at)) {
    std::uint32_t line = 1, col = 1;
    for (std::size_t i = 0; i < *off; ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    d.loc.line = line;
    d.loc.column = col;
  }
  d.message = std::move(message);
  sink_.report(std::move(d));
}

bool read_json_number(JsonInput& f, const nlohmann::json& obj, const std::string& at, const char* key, double& out,
                      bool required, bool positive) {
  if (!obj.contains(key)) {
    if (required) f.error(at, fmt::format("missing \"{}\"", key));
    return !required;
  }
  const auto& v = obj[key];
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 || (positive && v.get<double>() <= 0)) {
    f.error(at + "." + key, fmt::format("\"{}\" must be a finite number {} 0", key, positive ? ">" : ">="));
    return false;
  }
  out = v.get<double>();
  return true;
}

}  // namespace ppsched
