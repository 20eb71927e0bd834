#include "parse/json_input.hpp"

#include <fmt/format.h>

#include <cmath>

#include "diag/suggest.hpp"
#include "io/byte_sink.hpp"
#include "io/input_file.hpp"
#include "parse/io_diagnostic.hpp"
#include "parse/json_locate.hpp"

namespace ppsched {

std::pair<std::uint32_t, std::uint32_t> json_line_col(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::uint32_t line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset; ++i)
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  return {line, static_cast<std::uint32_t>(offset - line_start + 1)};
}

std::string_view json_line_at(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t b = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  b = (b == std::string_view::npos || b >= offset) ? 0 : b + 1;
  std::size_t e = text.find('\n', offset);
  if (e == std::string_view::npos) e = text.size();
  return text.substr(b, e - b);
}

Diagnostic json_syntax_diagnostic(std::string_view name, std::string_view text, const nlohmann::json::exception& e,
                                  std::size_t byte, std::string_view last_token, std::string rule) {
  Diagnostic d;
  d.rule = std::move(rule);
  d.loc.file = std::string(name);
  std::string what = e.what();
  if (e.id == 406) {
    // A number too large for a double: nlohmann names the literal; point at it.
    auto open = what.find('\''), close = what.rfind('\'');
    std::string literal = open != std::string::npos && close > open ? what.substr(open + 1, close - open - 1) : "";
    std::size_t at = std::string_view::npos;
    if (!literal.empty()) at = byte > 0 ? text.rfind(literal, byte - 1) : text.find(literal);
    if (at == std::string_view::npos && !literal.empty()) at = text.find(literal);
    if (at != std::string_view::npos) {
      auto [line, col] = json_line_col(text, at);
      d.loc.line = line;
      d.loc.column = col;
      d.snippet = make_snippet(json_line_at(text, at), col - 1, literal.size());
    }
    d.message = literal.empty() ? "invalid JSON: " + what
                                : "invalid JSON: the number " + literal + " is too large for a double";
    return d;
  }
  // byte is 1-based: the byte after the last one read. A string, number or literal the parser
  // stopped on ends there, and nlohmann's last_token holds it from its first byte (after a
  // bracket or comma it holds more than one token, ending in that one byte). Its text is
  // nlohmann's rendering (control bytes spelt out, "<end of input>"), so it is used only where
  // it matches the bytes.
  std::size_t at = byte > 0 ? byte - 1 : 0;
  const std::size_t end = std::min(byte, text.size());
  const bool one_byte =
      last_token.empty() || std::string_view("{}[],:").find(last_token.back()) != std::string_view::npos;
  if (!one_byte && last_token.size() <= end && text.substr(end - last_token.size(), last_token.size()) == last_token)
    at = end - last_token.size();
  auto [line, col] = json_line_col(text, at);
  d.loc.line = line;
  d.loc.column = col;
  auto cut = what.find(": ", what.find("column"));
  d.message = "invalid JSON: " + (cut == std::string::npos ? what : what.substr(cut + 2));
  d.snippet = make_snippet(json_line_at(text, at), col - 1, end > at ? end - at : 1);
  return d;
}

bool check_duplicate_keys(std::string_view name, std::string_view text, const std::string& rule, DiagnosticSink& sink) {
  auto dup = find_duplicate_key(text);
  if (!dup) return true;
  auto [line, col] = json_line_col(text, dup->second);
  auto [first_line, first_col] = json_line_col(text, dup->first);
  Diagnostic d;
  d.rule = rule;
  d.loc = {std::string(name), line, col, {}};
  d.message = fmt::format("duplicate key \"{}\": it is also given at {}:{} (ppsched does not guess which one is meant)",
                          dup->key, first_line, first_col);
  d.snippet = make_snippet(json_line_at(text, dup->second), col - 1, dup->key.size() + 2);
  Note n;
  n.loc = {std::string(name), first_line, first_col, {}};
  n.message = "the first \"" + dup->key + "\" is here";
  n.snippet = make_snippet(json_line_at(text, dup->first), first_col - 1, dup->key.size() + 2);
  d.notes.push_back(std::move(n));
  sink.report(std::move(d));
  return false;
}

namespace {

// Accepts every event and keeps the parse error: where the parser stopped and on what token,
// which nlohmann's exception does not say. Run on the error path only.
struct SyntaxProbe : nlohmann::json_sax<nlohmann::json> {
  std::size_t byte = 0;
  std::string last_token;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string& token, const nlohmann::json::exception&) override {
    byte = position;
    last_token = token;
    return false;
  }
};

}  // namespace

bool parse_json_text(std::string_view name, std::string_view text, const std::string& rule, nlohmann::json& doc,
                     DiagnosticSink& sink) {
  try {
    doc = nlohmann::json::parse(text);  // skips a UTF-8 byte order mark
    return true;
  } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number too large ("1e999")
    SyntaxProbe probe;
    nlohmann::json::sax_parse(text, &probe);
    sink.report(json_syntax_diagnostic(name, text, e, probe.byte, probe.last_token, rule));
    return false;
  }
}

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
  if (!parse_json_text(name_, text_, rule_, doc, sink_)) return false;
  if (!check_duplicate_keys(name_, text_, rule_, sink_)) return false;
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
    auto [line, col] = json_line_col(text_, *off);
    d.loc.line = line;
    d.loc.column = col;
  }
  d.message = std::move(message);
  sink_.report(std::move(d));
}

std::string unknown_key_message(std::string_view key, std::span<const std::string_view> keys) {
  if (auto near = closest_match(key, keys)) return fmt::format("unknown key '{}'; did you mean '{}'?", key, *near);
  return fmt::format("unknown key '{}' (the keys here are {})", key, fmt::join(keys, ", "));
}

bool JsonInput::known_keys(const nlohmann::json& obj, const std::string& at, std::span<const std::string_view> keys) {
  if (!obj.is_object()) return true;
  bool ok = true;
  for (const auto& [key, value] : obj.items()) {
    bool known = false;
    for (auto k : keys) known |= k == key;
    if (known) continue;
    error(at + "." + key, unknown_key_message(key, keys));
    ok = false;
  }
  return ok;
}

void JsonInput::wrong_type(const std::string& at, const nlohmann::json& value, std::string_view what) {
  auto dot = at.rfind('.');
  std::string key = dot == std::string::npos ? at : at.substr(dot + 1);
  error(at, fmt::format("\"{}\" must be {}, got {}", key, what, value.type_name()));
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
