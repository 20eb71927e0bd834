#include "diag/render.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "io/log_text.hpp"

namespace ppsched {

namespace {

const char* color_of(Severity s) {
  switch (s) {
    case Severity::Error:
      return "\x1b[1;31m";
    case Severity::Warning:
      return "\x1b[1;35m";
    case Severity::Note:
      return "\x1b[1;36m";
  }
  return "";
}

// Every piece of the user's text goes out through io/log_text.hpp: the file name starts the line,
// so it must not start a workflow command; messages quote cells, keys and names.
void append_loc(std::string& out, const SourceLoc& loc) {
  if (loc.file.empty()) return;
  out += display_path(loc.file);
  if (loc.line) {
    out += fmt::format(":{}", loc.line);
    if (loc.column) out += fmt::format(":{}", loc.column);
  }
  out += ": ";
}

// Whether the ':' at `i` ends "error" or "warning": the word a problem matcher reads as a
// finding's severity (docs/github/ppsched-matcher.json).
bool ends_severity_word(std::string_view text, std::size_t i) {
  auto ends_with = [&](std::string_view word) {
    return i >= word.size() && text.substr(i - word.size(), word.size()) == word;
  };
  return ends_with("error") || ends_with("warning");
}

// The source line as the log may show it: a leading "::" and "##[" escaped (workflow commands),
// the ':' after "error" or "warning" escaped (a line of the user's that reads "f.csv:1:1: error:
// x [rule]" would otherwise be taken by the problem matcher as a finding of ppsched's), any byte
// that is not printable ASCII as \xHH, and the caret moved with what it points at.
void append_snippet(std::string& out, const Snippet& s, bool color) {
  if (s.text.empty()) return;
  const bool command = starts_workflow_command(s.text);
  const std::size_t first_colon = s.text.find(':');
  std::string line, under;  // the line, and the blanks before the caret
  std::size_t caret_end = s.caret + std::max<std::uint32_t>(1, s.length), span = 0;
  for (std::size_t i = 0; i < s.text.size(); ++i) {
    const auto c = static_cast<unsigned char>(s.text[i]);
    const std::size_t before = line.size();
    if ((command && i == first_colon) || (c == ':' && ends_severity_word(s.text, i)))
      line += "\\x3A";
    else if (c == '[' && i >= 2 && s.text[i - 1] == '#' && s.text[i - 2] == '#')
      line += "\\x5B";
    else if ((c >= 0x20 && c < 0x7F) || c == '\t')
      line += static_cast<char>(c);
    else
      line += fmt::format("\\x{:02X}", c);
    const std::size_t width = line.size() - before;
    if (i < s.caret)  // keep tabs in the caret line so it lines up under tabbed source
      under.append(width, c == '\t' ? '\t' : ' ');
    else if (i < caret_end)
      span += width;
  }
  if (caret_end > s.text.size()) span += caret_end - std::max<std::size_t>(s.caret, s.text.size());
  out += line;
  out += '\n';
  out += under;
  if (color) out += "\x1b[1;32m";
  out += '^';
  for (std::size_t i = 1; i < std::max<std::size_t>(1, span); ++i) out += '~';
  if (color) out += "\x1b[0m";
  out += '\n';
}

void append_head(std::string& out, Severity sev, const SourceLoc& loc, const std::string& msg, const std::string& rule,
                 bool color) {
  if (color) out += "\x1b[1m";
  append_loc(out, loc);
  if (color) out += color_of(sev);
  out += severity_name(sev);
  out += ':';
  if (color) out += "\x1b[0m\x1b[1m";
  out += ' ';
  if (!loc.path.empty()) {
    append_printable(out, loc.path);
    out += ": ";
  }
  append_printable(out, msg);
  if (!rule.empty()) out += fmt::format(" [{}]", rule);
  if (color) out += "\x1b[0m";
  out += '\n';
}

}  // namespace

std::string render_text(const Diagnostic& d, const RenderOptions& opt) {
  std::string out;
  append_head(out, d.severity, d.loc, d.message, d.rule, opt.color);
  append_snippet(out, d.snippet, opt.color);
  for (const Note& n : d.notes) {
    append_head(out, Severity::Note, n.loc, n.message, {}, opt.color);
    append_snippet(out, n.snippet, opt.color);
  }
  return out;
}

std::string render_one_line(const Diagnostic& d) {
  std::string out;
  append_loc(out, d.loc);
  if (!d.loc.path.empty()) out += printable(d.loc.path) + ": ";
  append_printable(out, d.message);
  if (!d.rule.empty()) out += fmt::format(" [{}]", d.rule);
  return out;
}

std::string render_text(const DiagnosticSink& sink, const RenderOptions& opt) {
  std::string out;
  for (const Diagnostic& d : sink.diagnostics()) out += render_text(d, opt);
  if (sink.dropped_errors()) out += fmt::format("note: {} more error(s) not shown\n", sink.dropped_errors());
  return out;
}

}  // namespace ppsched
