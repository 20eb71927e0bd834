#include "diag/diagnostic.hpp"

#include <algorithm>

namespace ppsched {

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::Note:
      return "note";
    case Severity::Warning:
      return "warning";
    case Severity::Error:
      return "error";
  }
  return "error";
}

Snippet make_snippet(std::string_view line, std::size_t column0, std::size_t length, std::size_t width) {
  Snippet s;
  column0 = std::min(column0, line.size());
  length = std::max<std::size_t>(1, length);
  std::size_t begin = 0, end = line.size();
  if (end > width) {
    // Keep some context before the caret, then fill the window forwards.
    std::size_t before = width / 3;
    begin = column0 > before ? column0 - before : 0;
    end = std::min(line.size(), begin + width);
    if (end - begin < width && end == line.size()) begin = end > width ? end - width : 0;
  }
  s.text.reserve(end - begin + 6);
  if (begin > 0) s.text = "...";
  std::size_t shift = s.text.size();
  s.text.append(line.substr(begin, end - begin));
  for (std::size_t i = shift; i < s.text.size(); ++i) {
    auto c = static_cast<unsigned char>(s.text[i]);
    if (!(c == '\t' || (c >= 0x20 && c < 0x7f))) s.text[i] = '?';
  }
  if (end < line.size()) s.text += "...";
  s.caret = static_cast<std::uint32_t>(column0 - begin + shift);
  std::size_t room = end > column0 ? end - column0 : 1;
  s.length = static_cast<std::uint32_t>(std::min(length, room));
  return s;
}

void DiagnosticSink::report(Diagnostic d) {
  if (d.severity == Severity::Error) {
    if (full()) {
      ++dropped_;
      return;
    }
    ++errors_;
  } else if (d.severity == Severity::Warning) {
    ++warnings_;
  }
  items_.push_back(std::move(d));
}

}  // namespace ppsched
