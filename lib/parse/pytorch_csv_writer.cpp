#include "ir/action_text.hpp"
#include "parse/pytorch_csv.hpp"

namespace ppsched {

void write_pytorch_csv(const Schedule& s, ByteSink& out, const CsvWriteOptions& opt) {
  constexpr std::size_t kChunk = 1 << 20;
  const std::string_view eol = opt.line_ending == LineEnding::Crlf ? "\r\n" : "\n";
  std::string buf;
  buf.reserve(kChunk + 4096);
  for (const RankProgram& rank : s.ranks) {
    const auto& actions = rank.actions;
    if (actions.size() == 1 && actions[0].is_idle()) {
      // Python's csv.writer quotes a lone empty field so the row is not mistaken for a blank line.
      buf += "\"\"";
    } else {
      for (std::size_t i = 0; i < actions.size(); ++i) {
        if (i) buf += ',';
        append_action_text(buf, actions[i], s.sub_actions);
        if (buf.size() >= kChunk) {
          out.write(buf);
          buf.clear();
        }
      }
    }
    buf += eol;
  }
  out.write(buf);
}

std::string to_pytorch_csv(const Schedule& s, const CsvWriteOptions& opt) {
  std::string text;
  StringSink sink(text);
  write_pytorch_csv(s, sink, opt);
  return text;
}

}  // namespace ppsched
