#include "report/pipeline_grid.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <string_view>
#include <vector>

#include "io/ordered_chunks.hpp"
#include "ir/action_text.hpp"
#include "ir/rank_halves.hpp"

namespace ppsched {

namespace {

std::size_t decimal_digits(std::uint64_t v) {
  std::size_t n = 1;
  for (; v >= 10; v /= 10) ++n;
  return n;
}

// The length of a's text: for a plain action counted, not written; a container is formatted.
std::size_t text_size(const Action& a, const SubActionTable& subs, std::string& scratch) {
  if (a.is_idle()) return 0;
  if (a.is_container()) {
    scratch.clear();
    append_action_text(scratch, a, subs);
    return scratch.size();
  }
  return plain_text_size(a);
}

}  // namespace

// Rows are cut into chunks of steps that two threads format (io/ordered_chunks.hpp), each written
// through a raw pointer into room for its widest case: no cell is kept as a string (a string per
// cell was 30 bytes and an allocation per action of a 6M-action dry run, issue 48).
void write_pipeline_grid(const Schedule& s, ByteSink& sink, std::optional<std::size_t> error_step) {
  std::size_t steps = 0;
  for (const auto& r : s.ranks) steps = std::max(steps, r.actions.size());
  if (steps == 0 || s.ranks.empty()) return;
  const std::size_t ranks = s.ranks.size();
  const std::size_t digits = decimal_digits(steps - 1);
  const std::size_t label_len = 5 + digits;  // "Step " + zero-padded number

  std::vector<std::size_t> width(ranks, 0);
  for_rank_halves(s, [&](std::size_t, std::size_t begin, std::size_t end) {
    std::string scratch;
    for (std::size_t r = begin; r < end; ++r) {
      for (const Action& a : s.ranks[r].actions) width[r] = std::max(width[r], text_size(a, s.sub_actions, scratch));
      // PyTorch zips the step labels into the width computation of the first `steps` columns.
      // Beyond those it raises IndexError; ppsched widens them to their header instead.
      if (r < steps)
        width[r] = std::max(width[r], label_len);
      else
        width[r] = std::max(width[r], 5 + decimal_digits(r));
    }
  });
  std::string header(label_len + 2, ' ');
  for (std::size_t r = 0; r < ranks; ++r) {
    if (r) header += ' ';
    const std::string name = "Rank " + std::to_string(r);
    header += name;
    if (name.size() < width[r]) header.append(width[r] - name.size(), ' ');
  }
  header += '\n';
  sink.write(header);

  // Every row is a copy of a blank row (its columns are at fixed offsets) with the step's label and
  // each cell's text written over it: no padding worked out cell by cell.
  constexpr std::string_view kErrorMark = " <-- ERROR HERE";
  std::vector<std::size_t> column(ranks);
  std::size_t row_size = label_len + 2;
  for (std::size_t r = 0; r < ranks; ++r) {
    row_size += r ? 1 : 0;
    column[r] = row_size;
    row_size += width[r];
  }
  const std::string blank(row_size, ' ');
  const std::size_t row_room = row_size + kErrorMark.size() + 1;
  // About a megabyte of text a chunk.
  const std::size_t steps_per_chunk = std::max<std::size_t>(1, (std::size_t{1} << 20) / row_room);
  write_ordered_chunks(sink, (steps + steps_per_chunk - 1) / steps_per_chunk, [&](std::size_t k, ChunkText& text) {
    const std::size_t first = k * steps_per_chunk, last = std::min(steps, first + steps_per_chunk);
    std::string container;
    // write_plain_text may put spaces after a cell's text: past the last row's end, they need room.
    char* p = text.room((last - first) * row_room + kMaxPlainActionText);
    char label[24];
    for (std::size_t t = first; t < last; ++t) {
      std::memcpy(p, blank.data(), row_size);
      char* q = std::copy_n("Step ", 5, p);
      char* const label_end = std::to_chars(label, label + sizeof label, t).ptr;
      const auto label_size = static_cast<std::size_t>(label_end - label);
      q = std::fill_n(q, digits - label_size, '0');
      q = std::copy(label, label_end, q);
      *q = ':';
      for (std::size_t r = 0; r < ranks; ++r) {
        if (t >= s.ranks[r].actions.size()) continue;
        const Action& a = s.ranks[r].actions[t];
        // A row reads one cell of every rank: more streams than the hardware prefetcher follows.
        __builtin_prefetch(&a + 32);
        if (a.is_container()) [[unlikely]] {
          container.clear();
          append_action_text(container, a, s.sub_actions);
          std::copy(container.begin(), container.end(), p + column[r]);  // no wider than its column
        } else if (!a.is_idle()) {
          write_plain_text(p + column[r], a);
        }
      }
      p += row_size;
      if (error_step && *error_step == t) p = std::copy(kErrorMark.begin(), kErrorMark.end(), p);
      *p++ = '\n';
    }
    text.used(p);
  });
}

std::string format_pipeline_grid(const Schedule& s, std::optional<std::size_t> error_step) {
  std::string out;
  StringSink sink(out);
  write_pipeline_grid(s, sink, error_step);
  return out;
}

}  // namespace ppsched
