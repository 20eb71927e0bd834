#include <algorithm>
#include <memory>
#include <vector>

#include "io/ordered_chunks.hpp"

#include "ir/action_text.hpp"
#include "parse/pytorch_csv.hpp"

namespace ppsched {

void write_pytorch_csv(const Schedule& s, ByteSink& out, const CsvWriteOptions& opt) {
  // A row is its cells and then its line end: n + 1 units for a rank of n steps. The units are cut
  // into chunks that two threads format (io/ordered_chunks.hpp). Cells are written through a raw
  // pointer into room for a chunk's worst case: appending to a string a cell at a time was a third
  // of `compile --lower send-recv`'s time on a 6M-action schedule (docs/bench.md).
  constexpr std::size_t kUnitsPerChunk = std::size_t{1} << 17;  // about 1.3 MB of a schedule's text
  constexpr std::size_t kSlack = kMaxPlainActionText + 2;       // one cell, its comma or a line end
  const std::string_view eol = opt.line_ending == LineEnding::Crlf ? "\r\n" : "\n";
  std::vector<std::size_t> row_start{0};
  for (const RankProgram& rank : s.ranks) row_start.push_back(row_start.back() + rank.actions.size() + 1);
  const std::size_t units = row_start.back();
  write_ordered_chunks(out, (units + kUnitsPerChunk - 1) / kUnitsPerChunk, [&](std::size_t k, ChunkText& text) {
    const std::size_t first = k * kUnitsPerChunk, last = std::min(units, first + kUnitsPerChunk);
    char* p = text.room((last - first) * kSlack);
    std::string container;  // a container's text, which has no bound (rare)
    auto rank =
        static_cast<std::size_t>(std::upper_bound(row_start.begin(), row_start.end(), first) - row_start.begin()) - 1;
    for (std::size_t unit = first; unit < last; ++rank) {
      const auto& actions = s.ranks[rank].actions;
      const std::size_t stop = std::min(actions.size() + 1, last - row_start[rank]);
      for (std::size_t i = unit - row_start[rank]; i < stop; ++i) {
        if (i == actions.size()) {
          p = std::copy(eol.begin(), eol.end(), p);
        } else if (actions.size() == 1 && actions[0].is_idle()) {
          // Python's csv.writer quotes a lone empty field so the row is not mistaken for a blank line.
          *p++ = '"';
          *p++ = '"';
        } else {
          if (i) *p++ = ',';
          const Action& a = actions[i];
          if (a.is_container()) [[unlikely]] {
            container.clear();
            append_action_text(container, a, s.sub_actions);
            text.used(p);
            text.append(container);
            p = text.room((last - row_start[rank] - i) * kSlack);
          } else if (!a.is_idle()) {
            p = write_plain_text(p, a);
          }
        }
      }
      unit = row_start[rank] + stop;
    }
    text.used(p);
  });
}

void write_pytorch_csv(const Schedule& programs, const StepWaits& waits, ByteSink& out, const CsvWriteOptions& opt) {
  // A chunk is a stretch of one rank's program, its waits put back as empty cells (a comma each),
  // the rank's last chunk ending its row. Rows of a timeline never hold a lone idle cell (a
  // timeline ends with an action), so none is quoted.
  constexpr std::size_t kActionsPerChunk = std::size_t{1} << 17;
  constexpr std::size_t kSlack = kMaxPlainActionText + 1;  // one cell and the comma before it
  const std::string_view eol = opt.line_ending == LineEnding::Crlf ? "\r\n" : "\n";
  struct Stretch {
    std::uint32_t rank;
    std::size_t begin, end;  ///< program positions
    std::size_t wait;        ///< the rank's first wait at or after `begin`
    bool started;            ///< the row has a cell before the stretch: an action before `begin`
  };
  std::vector<Stretch> stretches;
  for (std::uint32_t r = 0; r < programs.rank_count(); ++r) {
    const auto& actions = programs.ranks[r].actions;
    const std::size_t size = actions.size();
    const std::vector<StepWait>& w = waits.waits[r];
    const auto first = static_cast<std::size_t>(
        std::find_if(actions.begin(), actions.end(), [](const Action& a) { return !a.is_idle(); }) - actions.begin());
    std::size_t wait = 0, begin = 0;
    do {
      const std::size_t end = std::min(size, begin + kActionsPerChunk);
      stretches.push_back({r, begin, end, wait, first < begin});
      while (wait < w.size() && w[wait].before < end) ++wait;
      begin = end;
    } while (begin < size);
  }
  write_ordered_chunks(out, stretches.size(), [&](std::size_t k, ChunkText& text) {
    const Stretch& at = stretches[k];
    const std::vector<Action>& actions = programs.ranks[at.rank].actions;
    const std::vector<StepWait>& w = waits.waits[at.rank];
    std::size_t idle = 0;
    for (std::size_t i = at.wait; i < w.size() && w[i].before < at.end; ++i) idle += w[i].count;
    char* p = text.room((at.end - at.begin) * kSlack + idle + eol.size());
    bool started = at.started;
    std::string container;  // a container's text, which has no bound (rare)
    std::size_t wait = at.wait;
    for (std::size_t i = at.begin; i < at.end; ++i) {
      const Action& a = actions[i];
      if (a.is_idle()) continue;  // the input's idle steps are not the timeline's
      // Each idle cell and this action's are preceded by a comma, but for the row's first cell.
      std::size_t commas = started ? 1 : 0;
      if (wait < w.size() && w[wait].before == i) commas += w[wait++].count;
      p = std::fill_n(p, commas, ',');
      started = true;
      if (a.is_container()) [[unlikely]] {
        container.clear();
        append_action_text(container, a, programs.sub_actions);
        text.used(p);
        text.append(container);
        p = text.room((at.end - i) * kSlack + idle + eol.size());
      } else {
        p = write_plain_text(p, a);
      }
    }
    if (at.end == actions.size()) p = std::copy(eol.begin(), eol.end(), p);
    text.used(p);
  });
}

std::string to_pytorch_csv(const Schedule& s, const CsvWriteOptions& opt) {
  std::string text;
  StringSink sink(text);
  write_pytorch_csv(s, sink, opt);
  return text;
}

}  // namespace ppsched
