#include "diag/render.hpp"

#include <fmt/format.h>

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

void append_loc(std::string& out, const SourceLoc& loc) {
  if (loc.file.empty()) return;
  out += loc.file;
  if (loc.line) {
    out += fmt::format(":{}", loc.line);
    if (loc.column) out += fmt::format(":{}", loc.column);
  }
  out += ": ";
}

void append_snippet(std::string& out, const Snippet& s, bool color) {
  if (s.text.empty()) return;
  out += s.text;
  out += '\n';
  // Keep tabs in the caret line so it lines up under tabbed source.
  for (std::uint32_t i = 0; i < s.caret && i < s.text.size(); ++i) out += s.text[i] == '\t' ? '\t' : ' ';
  if (color) out += "\x1b[1;32m";
  out += '^';
  for (std::uint32_t i = 1; i < s.length; ++i) out += '~';
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
    out += loc.path;
    out += ": ";
  }
  out += msg;
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
  if (!d.loc.path.empty()) out += d.loc.path + ": ";
  out += d.message;
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
