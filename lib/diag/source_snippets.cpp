#include "diag/source_snippets.hpp"

namespace ppsched {

bool needs_snippets(const std::vector<Diagnostic>& diagnostics) {
  for (const Diagnostic& d : diagnostics)
    if (d.loc.line != 0 && d.snippet.text.empty()) return true;
  return false;
}

void fill_snippets(std::vector<Diagnostic>& diagnostics, std::string_view text) {
  std::vector<std::size_t> starts{0};
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') starts.push_back(i + 1);
  auto line_text = [&](std::uint32_t line) -> std::string_view {
    if (line == 0 || line > starts.size()) return {};
    std::size_t b = starts[line - 1];
    std::size_t e = line < starts.size() ? starts[line] - 1 : text.size();
    if (e > b && text[e - 1] == '\r') --e;
    return text.substr(b, e - b);
  };
  auto fill = [&](const SourceLoc& loc, Snippet& snip) {
    if (!loc.line || !loc.column) return;
    std::string_view l = line_text(loc.line);
    std::size_t col0 = loc.column - 1;
    std::size_t end = l.find(',', col0);
    snip = make_snippet(l, col0, (end == std::string_view::npos ? l.size() : end) - col0);
  };
  for (Diagnostic& d : diagnostics) {
    fill(d.loc, d.snippet);
    for (Note& n : d.notes) fill(n.loc, n.snippet);
  }
}

}  // namespace ppsched
