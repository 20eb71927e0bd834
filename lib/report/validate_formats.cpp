#include "report/validate_formats.hpp"

#include <fmt/format.h>

#include <cctype>

#include <nlohmann/json.hpp>

#include "check/check.hpp"
#include "diag/render.hpp"
#include "io/log_text.hpp"
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

// RFC 3986: a path's bytes as a URI path. The unreserved characters, the sub-delimiters, '@' and
// '/' stay as they are; every other byte (space, '#', '?', '%', ':', which would read as a
// scheme in a relative reference, non-ASCII UTF-8, controls) becomes %XX.
std::string uri_path(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~' || c == '/' || c == '@' ||
        std::string_view("!$&'()*+,;=").find(static_cast<char>(c)) != std::string_view::npos) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// A path as SARIF names it: relative to `root` when it lies under it, with the uriBaseId %SRCROOT%
// (code scanning resolves it to the checkout, so the document names no machine's path); an
// absolute path elsewhere as a file:// URI. Both percent-encoded (`a b#c.csv` is `a%20b%23c.csv`).
nlohmann::ordered_json artifact(const std::string& file, const std::string& root) {
  std::string path = file;
  if (!root.empty() && path.size() > root.size() && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/')
    path = path.substr(root.size() + 1);
  while (path.rfind("./", 0) == 0) path = path.substr(2);
  if (path == "<stdin>" || path == "-") return nlohmann::ordered_json{{"uri", "stdin"}};
  const bool absolute = !path.empty() && path.front() == '/';
  // ':' is encoded too, so a relative path never reads as a URI scheme.
  nlohmann::ordered_json a{{"uri", absolute ? "file://" + uri_path(path) : uri_path(path)}};
  if (!root.empty() && !path.empty() && !absolute) a["uriBaseId"] = "%SRCROOT%";
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

std::string docs_url_problem(std::string_view url) {
  const std::string shown = printable(url);
  const auto refuse = [&](std::string_view why) { return fmt::format("'{}' is refused: {}", shown, why); };
  std::string_view rest;
  if (url.rfind("https://", 0) == 0)
    rest = url.substr(8);
  else if (url.rfind("http://", 0) == 0)
    rest = url.substr(7);
  else
    return refuse("it is not an absolute http(s) URL, and code scanning links lead nowhere without one");
  for (char c : url) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7F) return refuse("it holds a blank, a control character or a byte that is not ASCII");
    if (std::string_view("\"'<>\\`{}|^").find(c) != std::string_view::npos)
      return refuse(fmt::format("it holds '{}', which a link must not", c));
  }
  if (url.find_first_of("?#") != std::string_view::npos)
    return refuse("a base URL has no query or fragment ('rules.md#<rule>' is added to it)");
  const std::size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  if (authority.find('@') != std::string_view::npos) return refuse("it names a user ('@' before the host)");
  std::string_view host = authority, port;
  if (!host.empty() && host.front() == '[') {  // an IPv6 literal
    const std::size_t close = host.find(']');
    if (close == std::string_view::npos || close < 3) return refuse("its [IPv6] host is not closed");
    for (char c : host.substr(1, close - 1))
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.')
        return refuse("its [IPv6] host is malformed");
    port = host.substr(close + 1);
    if (!port.empty() && port.front() != ':') return refuse("something follows its [IPv6] host");
  } else {
    const std::size_t colon = host.find(':');
    if (colon != std::string_view::npos) port = host.substr(colon), host = host.substr(0, colon);
    if (host.empty()) return refuse("it has no host");
    if (host.front() == '.' || host.front() == '-' || host.back() == '.' || host.back() == '-' ||
        host.find("..") != std::string_view::npos)
      return refuse("its host is malformed");
    for (char c : host)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-')
        return refuse("its host may hold only letters, digits, '.' and '-'");
  }
  if (!port.empty()) {
    const std::string_view digits = port.substr(1);
    if (digits.empty() || digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string_view::npos)
      return refuse("its port is not a number");
  }
  if (slash == std::string_view::npos || url.back() != '/')
    return refuse("it must end with '/', at the folder that holds rules.md");
  return {};
}

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
      rest += guarded(render_text(d));  // safe as rendered; the guard says so in one place
      ++over;
      return;
    }
    const char* cmd = d.severity == Severity::Error ? "error" : d.severity == Severity::Warning ? "warning" : "notice";
    std::string props = "file=" + escape_property(printable(f.file));
    if (d.loc.line) props += fmt::format(",line={}", d.loc.line);
    if (d.loc.line && d.loc.column)
      props += fmt::format(",col={},endColumn={}", d.loc.column,
                           d.loc.column + std::max<std::uint32_t>(1, d.snippet.length));
    props += ",title=";
    props += escape_property(fmt::format("ppsched {}", d.rule));
    // The user's text in a message is made printable line by line; the lines are joined by
    // newlines (%0A) that ppsched puts there.
    std::string message =
        d.loc.path.empty() ? printable(d.message) : fmt::format("{}: {}", printable(d.loc.path), printable(d.message));
    for (const Note& n : d.notes) {
      if (n.loc.line)
        message +=
            fmt::format("\n{}:{}:{}: note: {}", printable(f.file), n.loc.line, n.loc.column, printable(n.message));
      else
        message += fmt::format("\nnote: {}", printable(n.message));
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

// A Markdown table cell of the user's text: no HTML (< > & as entities), no Markdown structure
// (emphasis, code, links, strike-through and the cell separator backslash-escaped, "://" broken
// so no URL becomes a link), control characters shown as \xHH; the line breaks are ppsched's own
// <br> between the lines of a message.
std::string cell(std::string_view s) {
  std::string out;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t nl = s.find('\n', start);
    if (nl == std::string_view::npos) nl = s.size();
    if (start) out += "<br>";
    std::string_view line = s.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    for (char c : printable(line)) {
      switch (c) {
        case '<':
          out += "&lt;";
          break;
        case '>':
          out += "&gt;";
          break;
        case '&':
          out += "&amp;";
          break;
        case ':':
          out += "&#58;";
          break;
        case '\\':
        case '`':
        case '*':
        case '_':
        case '[':
        case ']':
        case '~':
        case '|':
        case '!':
        case '#':
          out += '\\';
          out += c;
          break;
        default:
          out += c;
      }
    }
    start = nl + 1;
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
