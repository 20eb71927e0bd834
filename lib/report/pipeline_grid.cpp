#include "report/pipeline_grid.hpp"

#include <algorithm>
#include <vector>

#include "ir/action_text.hpp"

namespace ppsched {

// The grid is written as it is formatted, row by row into a small buffer: no cell is kept as a
// string (a string per cell was 30 bytes and an allocation per action of a 6M-action dry run,
// issue 48). Each cell is formatted twice, once for its column's width and once to write it.
void write_pipeline_grid(const Schedule& s, ByteSink& sink, std::optional<std::size_t> error_step) {
  std::size_t steps = 0;
  for (const auto& r : s.ranks) steps = std::max(steps, r.actions.size());
  if (steps == 0 || s.ranks.empty()) return;
  const std::size_t ranks = s.ranks.size();
  const std::size_t digits = std::to_string(steps - 1).size();
  const std::size_t label_len = 5 + digits;  // "Step " + zero-padded number

  std::string cell;
  std::vector<std::size_t> width(ranks, 0);
  for (std::size_t r = 0; r < ranks; ++r) {
    for (const Action& a : s.ranks[r].actions) {
      cell.clear();
      append_action_text(cell, a, s.sub_actions);
      width[r] = std::max(width[r], cell.size());
    }
    // PyTorch zips the step labels into the width computation of the first `steps` columns.
    // Beyond those it raises IndexError; ppsched widens them to their header instead.
    if (r < steps)
      width[r] = std::max(width[r], label_len);
    else
      width[r] = std::max(width[r], 5 + std::to_string(r).size());
  }
  auto pad = [](std::string& out, std::size_t written, std::size_t w) {
    if (written < w) out.append(w - written, ' ');
  };

  constexpr std::size_t kFlushAt = std::size_t{1} << 16;
  std::string out(label_len + 2, ' ');
  for (std::size_t r = 0; r < ranks; ++r) {
    if (r) out += ' ';
    const std::string header = "Rank " + std::to_string(r);
    out += header;
    pad(out, header.size(), width[r]);
  }
  out += '\n';
  for (std::size_t t = 0; t < steps; ++t) {
    std::string num = std::to_string(t);
    out += "Step ";
    out.append(digits - num.size(), '0');
    out += num;
    out += ": ";
    for (std::size_t r = 0; r < ranks; ++r) {
      if (r) out += ' ';
      const std::size_t before = out.size();
      if (t < s.ranks[r].actions.size()) append_action_text(out, s.ranks[r].actions[t], s.sub_actions);
      pad(out, out.size() - before, width[r]);
    }
    if (error_step && *error_step == t) out += " <-- ERROR HERE";
    out += '\n';
    if (out.size() >= kFlushAt) {
      sink.write(out);
      out.clear();
    }
  }
  sink.write(out);
}

std::string format_pipeline_grid(const Schedule& s, std::optional<std::size_t> error_step) {
  std::string out;
  StringSink sink(out);
  write_pipeline_grid(s, sink, error_step);
  return out;
}

}  // namespace ppsched
