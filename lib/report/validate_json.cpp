#include "report/validate_json.hpp"

#include <nlohmann/json.hpp>

#include "report/json_text.hpp"

namespace ppsched {

namespace {

nlohmann::ordered_json diagnostic_json(const Diagnostic& d) {
  nlohmann::ordered_json j{{"rule", d.rule},       {"severity", severity_name(d.severity)},
                           {"message", d.message}, {"file", d.loc.file},
                           {"line", d.loc.line},   {"column", d.loc.column}};
  if (!d.loc.path.empty()) j["path"] = d.loc.path;
  auto& ns = j["notes"] = nlohmann::ordered_json::array();
  for (const Note& n : d.notes) ns.push_back({{"message", n.message}, {"line", n.loc.line}, {"column", n.loc.column}});
  return j;
}

nlohmann::ordered_json file_json(const FileDiagnostics& f) {
  nlohmann::ordered_json j;
  j["file"] = f.file;
  j["readable"] = f.readable;
  j["errors"] = f.errors;
  j["warnings"] = f.warnings;
  auto& notes = j["notes"] = nlohmann::ordered_json::array();
  for (const Inference& i : f.inferred) notes.push_back(i.what);
  auto& list = j["diagnostics"] = nlohmann::ordered_json::array();
  for (const Diagnostic& d : f.diagnostics) list.push_back(diagnostic_json(d));
  return j;
}

}  // namespace

std::string validate_json(const std::vector<FileDiagnostics>& files, const std::vector<std::string>& tool_errors) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const FileDiagnostics& f : files) list.push_back(file_json(f));
  nlohmann::ordered_json doc{{"schema_version", 1}, {"tool", "ppsched validate"}, {"files", std::move(list)}};
  if (!tool_errors.empty()) doc["tool_errors"] = tool_errors;
  return json_text(doc);
}

}  // namespace ppsched
