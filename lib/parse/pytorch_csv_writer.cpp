#include <memory>

#include "ir/action_text.hpp"
#include "parse/pytorch_csv.hpp"

namespace ppsched {

void write_pytorch_csv(const Schedule& s, ByteSink& out, const CsvWriteOptions& opt) {
  // Cells go into a raw buffer, flushed a megabyte at a time: appending to a string a cell at a
  // time was a third of `compile --lower send-recv`'s time on a 6M-action schedule (docs/bench.md).
  constexpr std::size_t kChunk = 1 << 20;
  constexpr std::size_t kSlack = kMaxPlainActionText + 8;  // one cell, its comma and a line end
  const std::string_view eol = opt.line_ending == LineEnding::Crlf ? "\r\n" : "\n";
  const auto buf = std::make_unique_for_overwrite<char[]>(kChunk + kSlack);
  char* const begin = buf.get();
  char* p = begin;
  auto flush = [&] {
    out.write(std::string_view(begin, static_cast<std::size_t>(p - begin)));
    p = begin;
  };
  std::string container;  // a container's text, which has no bound (rare)
  for (const RankProgram& rank : s.ranks) {
    const auto& actions = rank.actions;
    if (actions.size() == 1 && actions[0].is_idle()) {
      // Python's csv.writer quotes a lone empty field so the row is not mistaken for a blank line.
      *p++ = '"';
      *p++ = '"';
    } else {
      for (std::size_t i = 0; i < actions.size(); ++i) {
        if (i) *p++ = ',';
        const Action& a = actions[i];
        if (a.is_container()) {
          container.clear();
          append_action_text(container, a, s.sub_actions);
          flush();
          out.write(container);
        } else if (!a.is_idle()) {
          p = write_plain_text(p, a);
        }
        if (static_cast<std::size_t>(p - begin) >= kChunk) flush();
      }
    }
    for (char c : eol) *p++ = c;
    if (static_cast<std::size_t>(p - begin) >= kChunk) flush();
  }
  flush();
}

std::string to_pytorch_csv(const Schedule& s, const CsvWriteOptions& opt) {
  std::string text;
  StringSink sink(text);
  write_pytorch_csv(s, sink, opt);
  return text;
}

}  // namespace ppsched
