#include "report/validate_formats.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "check/check.hpp"
#include "diag/render.hpp"
#include "report/json_text.hpp"

namespace ppsched {

namespace {

const char* sarif_level(Severity s) {
  switch (s) {
    case Severity::Error:
      return "error";
    case Severity::Warning:
      return "warning";
    case Severity::Note:
      return "note";
  }
  return "warning";
}

const char* rule_level(RuleLevel l) {
  switch (l) {
    case RuleLevel::Error:
      return "error";
    case RuleLevel::Warning:
      return "warning";
    case RuleLevel::Note:
      return "note";
    case RuleLevel::Off:
      return "none";
  }
  return "warning";
}

// Parse-level ids come from the readers, not the rule table; they still need a descriptor.
constexpr std::pair<const char*, const char*> kReaderRules[] = {
    {"action-syntax", "a cell is not an action"},
    {"action-noncanonical", "a cell PyTorch accepts but does not write (strict mode)"},
    {"action-dialect", "the file uses PyTorch's action names from before 2.6 (B for today's I, BW for B)"},
    {"action-limit", "a stage or microbatch beyond ppsched's limits"},
    {"csv-syntax", "the CSV file is malformed (quoting, NUL bytes)"},
    {"csv-limit", "a line or row count beyond ppsched's limits"},
    {"json-syntax", "the JSON file is malformed"},
    {"json-schema", "the JSON schedule does not follow schema_version 1"},
    {"io-error", "the file cannot be read"},
    {"stage-spec", "the stage spec is malformed"},
    {"cost-file", "the cost table is malformed"},
};

nlohmann::ordered_json region(const SourceLoc& loc, const Snippet& snip) {
  nlohmann::ordered_json r{{"startLine", loc.line ? loc.line : 1}};
  if (loc.line && loc.column) {
    r["startColumn"] = loc.column;
    r["endColumn"] = loc.column + std::max<std::uint32_t>(1, snip.length);
  }
  return r;
}

// GitHub workflow-command escaping: a message escapes '%', CR and LF; a property value
// (file=, title=) also ':' and ',', which separate properties.
std::string escape_workflow(std::string_view s, bool property) {
  std::string out;
  for (char c : s) {
    if (c == '%')
      out += "%25";
    else if (c == '\r')
      out += "%0D";
    else if (c == '\n')
      out += "%0A";
    else if (property && c == ':')
      out += "%3A";
    else if (property && c == ',')
      out += "%2C";
    else
      out += c;
  }
  return out;
}

std::string escape_data(std::string_view s) { return escape_workflow(s, false); }
std::string escape_property(std::string_view s) { return escape_workflow(s, true); }

// A path as SARIF names it: relative to `root` when it lies under it, with the uriBaseId %SRCROOT%
// (code scanning resolves it to the checkout, so the document names no machine's path); an
// absolute path elsewhere as given.
nlohmann::ordered_json artifact(const std::string& file, const std::string& root) {
  std::string path = file;
  if (!root.empty() && path.size() > root.size() && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/')
    path = path.substr(root.size() + 1);
  while (path.rfind("./", 0) == 0) path = path.substr(2);
  nlohmann::ordered_json a{{"uri", path}};
  if (!root.empty() && !path.empty() && path.front() != '/' && path != "<stdin>") a["uriBaseId"] = "%SRCROOT%";
  return a;
}

// The findings in the order GitHub should keep them: errors, then warnings, then notes.
template <typename Visit>
void by_severity(const std::vector<FileDiagnostics>& files, Visit&& visit) {
  for (Severity sev : {Severity::Error, Severity::Warning, Severity::Note})
    for (const FileDiagnostics& f : files)
      for (const Diagnostic& d : f.diagnostics)
        if (d.severity == sev) visit(f, d);
}

}  // namespace

std::string sarif_report(const std::vector<FileDiagnostics>& files, const SarifOptions& opt) {
  nlohmann::ordered_json rules = nlohmann::ordered_json::array();
  std::vector<std::string> ids;
  for (const Rule& r : ppsched::rules()) {
    ids.emplace_back(r.id);
    rules.push_back({{"id", r.id},
                     {"shortDescription", {{"text", r.summary}}},
                     {"fullDescription", {{"text", fmt::format("{}. {}.", r.summary, r.help)}}},
                     {"help",
                      {{"text", r.help},
                       {"markdown", fmt::format("{}\n\nSee [{}]({}rules.md#{}).", r.help, r.id, opt.docs_url, r.id)}}},
                     {"helpUri", fmt::format("{}rules.md#{}", opt.docs_url, r.id)},
                     {"defaultConfiguration", {{"level", rule_level(r.level)}}}});
  }
  for (const auto& [id, text] : kReaderRules) {
    ids.emplace_back(id);
    rules.push_back({{"id", id},
                     {"shortDescription", {{"text", text}}},
                     {"fullDescription", {{"text", fmt::format("{}.", text)}}},
                     {"help", {{"text", "See docs/formats.md."}}},
                     {"helpUri", opt.docs_url + "formats.md"},
                     {"defaultConfiguration", {{"level", "error"}}}});
  }
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const FileDiagnostics& f : files)
    for (const Diagnostic& d : f.diagnostics) {
      nlohmann::ordered_json res;
      auto it = std::find(ids.begin(), ids.end(), d.rule);
      res["ruleId"] = d.rule.empty() ? std::string("io-error") : d.rule;
      if (it != ids.end()) res["ruleIndex"] = it - ids.begin();
      res["level"] = sarif_level(d.severity);
      std::string message = d.message;
      if (!d.loc.path.empty()) message = fmt::format("{}: {}", d.loc.path, message);
      nlohmann::ordered_json related = nlohmann::ordered_json::array();
      for (std::size_t i = 0; i < d.notes.size(); ++i) {
        const Note& n = d.notes[i];
        if (n.loc.line) {
          related.push_back(
              {{"id", i + 1},
               {"message", {{"text", n.message}}},
               {"physicalLocation",
                {{"artifactLocation", artifact(f.file, opt.srcroot)}, {"region", region(n.loc, n.snippet)}}}});
        } else {
          message += " " + n.message;
        }
      }
      res["message"] = {{"text", message}};
      res["locations"] = nlohmann::ordered_json::array(
          {{{"physicalLocation",
             {{"artifactLocation", artifact(f.file, opt.srcroot)}, {"region", region(d.loc, d.snippet)}}}}});
      if (!related.empty()) res["relatedLocations"] = related;
      results.push_back(std::move(res));
    }
  nlohmann::ordered_json run{{"tool",
                              {{"driver",
                                {{"name", "ppsched"},
                                 {"semanticVersion", opt.version},
                                 {"informationUri", opt.docs_url + "manual.md"},
                                 {"rules", rules}}}}}};
  if (!opt.tool_errors.empty()) {
    nlohmann::ordered_json notes = nlohmann::ordered_json::array();
    for (const std::string& e : opt.tool_errors) notes.push_back({{"level", "error"}, {"message", {{"text", e}}}});
    run["invocations"] = nlohmann::ordered_json::array(
        {{{"executionSuccessful", false}, {"toolExecutionNotifications", std::move(notes)}}});
  }
  run["columnKind"] = "utf16CodeUnits";
  run["results"] = results;
  nlohmann::ordered_json doc{
      {"version", "2.1.0"},
      {"$schema", "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json"},
      {"runs", nlohmann::ordered_json::array({run})}};
  return json_text(doc);
}

std::string github_annotations(const std::vector<FileDiagnostics>& files) {
  constexpr std::size_t kPerSeverity = 10;  // GitHub shows at most 10 of each per step
  std::string out, rest;
  std::size_t shown[3] = {0, 0, 0}, over = 0;
  by_severity(files, [&](const FileDiagnostics& f, const Diagnostic& d) {
    if (shown[static_cast<int>(d.severity)]++ >= kPerSeverity) {
      // Past GitHub's limit: as the text format prints it, so the log keeps it.
      rest += render_text(d);
      ++over;
      return;
    }
    const char* cmd = d.severity == Severity::Error ? "error" : d.severity == Severity::Warning ? "warning" : "notice";
    std::string props = "file=" + escape_property(f.file);
    if (d.loc.line) props += fmt::format(",line={}", d.loc.line);
    if (d.loc.line && d.loc.column)
      props += fmt::format(",col={},endColumn={}", d.loc.column,
                           d.loc.column + std::max<std::uint32_t>(1, d.snippet.length));
    props += ",title=";
    props += escape_property(fmt::format("ppsched {}", d.rule));
    std::string message = d.loc.path.empty() ? d.message : fmt::format("{}: {}", d.loc.path, d.message);
    for (const Note& n : d.notes) {
      if (n.loc.line)
        message += fmt::format("\n{}:{}:{}: note: {}", f.file, n.loc.line, n.loc.column, n.message);
      else
        message += fmt::format("\nnote: {}", n.message);
    }
    out += fmt::format("::{} {}::{}\n", cmd, props, escape_data(message));
  });
  if (over)
    out += fmt::format(
        "::notice title=ppsched::{} more finding(s) follow as plain lines: GitHub annotates 10 of each "
        "kind per step\n{}",
        over, rest);
  return out;
}

namespace {

// A Markdown table cell: no line breaks, no column separators.
std::string cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += "<br>";
    else if (c != '\r')
      out += c;
  }
  return out;
}

}  // namespace

std::string github_step_summary(const std::vector<FileDiagnostics>& files, std::size_t max_bytes) {
  std::size_t errors = 0, warnings = 0, notes = 0, with_findings = 0;
  for (const FileDiagnostics& f : files) {
    with_findings += !f.diagnostics.empty();
    for (const Diagnostic& d : f.diagnostics)
      (d.severity == Severity::Error ? errors : d.severity == Severity::Warning ? warnings : notes) += 1;
  }
  std::string out = fmt::format(
      "### ppsched validate\n\n{} file{} checked, {} with findings: {} error(s), {} warning(s), "
      "{} note(s)\n",
      files.size(), files.size() == 1 ? "" : "s", with_findings, errors, warnings, notes);
  if (errors + warnings + notes == 0) return out;
  out += "\n| file | line | column | severity | rule | message |\n|---|--:|--:|---|---|---|\n";
  std::size_t left_out = 0;
  by_severity(files, [&](const FileDiagnostics& f, const Diagnostic& d) {
    std::string message = d.loc.path.empty() ? d.message : fmt::format("{}: {}", d.loc.path, d.message);
    for (const Note& n : d.notes) message += "\nnote: " + n.message;
    std::string row = fmt::format("| {} | {} | {} | {} | {} | {} |\n", cell(f.file), d.loc.line, d.loc.column,
                                  sarif_level(d.severity), cell(d.rule), cell(message));
    if (left_out || out.size() + row.size() + 200 > max_bytes) {
      ++left_out;
      return;
    }
    out += row;
  });
  if (left_out)
    out += fmt::format("\n{} more finding(s) left out here (GitHub keeps 1 MiB per step); the job log has them.\n",
                       left_out);
  return out;
}

}  // namespace ppsched
