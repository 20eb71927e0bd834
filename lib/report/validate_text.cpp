#include "report/validate_text.hpp"

#include <fmt/format.h>

#include "diag/render.hpp"
#include "diag/suggest.hpp"
#include "io/log_text.hpp"

namespace ppsched {

namespace {

std::string_view rule_level_name(RuleLevel l) {
  switch (l) {
    case RuleLevel::Off:
      return "off";
    case RuleLevel::Note:
      return "note";
    case RuleLevel::Warning:
      return "warning";
    case RuleLevel::Error:
      return "error";
  }
  return "error";
}

}  // namespace

std::string validate_text(const FileDiagnostics& f, bool color, bool quiet) {
  std::string out;
  for (const Diagnostic& d : f.diagnostics) out += render_text(d, RenderOptions{color});
  if (quiet) return out;
  if (!f.inferred.empty()) {
    // Only the flags that set what was inferred: --schedule given alone still leaves the ranks
    // and microbatches to the file.
    std::vector<std::string_view> pins;
    std::string joined, flags;
    for (const Inference& i : f.inferred) {
      joined += (joined.empty() ? "" : "; ") + i.what;
      pins.insert(pins.end(), i.flags.begin(), i.flags.end());
    }
    for (std::size_t i = 0; i < pins.size(); ++i)
      flags += fmt::format("{}{}", i == 0 ? "" : i + 1 == pins.size() ? " or " : ", ", pins[i]);
    out += fmt::format("{}: note: inferred {} (pass {} to check against {})\n", display_path(f.file), joined, flags,
                       f.inferred.size() == 1 ? "it" : "them");
  }
  out += fmt::format("{}: {}\n", display_path(f.file),
                     !f.readable              ? "unreadable"
                     : f.errors || f.warnings ? fmt::format("{} error(s), {} warning(s)", f.errors, f.warnings)
                                              : std::string("ok"));
  return out;
}

void ValidateTally::add(const FileDiagnostics& f) {
  ++files;
  with_findings += f.errors + f.warnings > 0 || !f.readable;
  unreadable += !f.readable;
  errors += f.errors;
  warnings += f.warnings;
}

std::string ValidateTally::text() const {
  std::string out = fmt::format("ppsched validate: {} file{}, {} with findings: {} error(s), {} warning(s)", files,
                                files == 1 ? "" : "s", with_findings, errors, warnings);
  if (unreadable) out += fmt::format(", {} unreadable", unreadable);
  return out + "\n";
}

std::string rules_text() {
  std::string out;
  for (const Rule& r : rules()) out += fmt::format("{:<26} {:<8} {}\n", r.id, rule_level_name(r.level), r.summary);
  return out;
}

std::string rule_explanation_text(const Rule& r) {
  return fmt::format("{} ({} by default)\n  {}\n  how to fix: {}\n  docs/rules.md#{}\n", r.id, rule_level_name(r.level),
                     r.summary, r.help, r.id);
}

std::string unknown_rule_message(const std::string& id) {
  std::vector<std::string_view> ids;
  for (const Rule& x : rules()) ids.push_back(x.id);
  std::string msg = "unknown rule '" + id + "'";
  if (auto near = closest_match(id, ids)) msg += "; did you mean '" + *near + "'?";
  return msg + " (see --list-rules)";
}

}  // namespace ppsched
