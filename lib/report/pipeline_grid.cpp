#include "report/pipeline_grid.hpp"

#include <algorithm>
#include <vector>

#include "ir/action_text.hpp"

namespace ppsched {

std::string format_pipeline_grid(const Schedule& s, std::optional<std::size_t> error_step) {
  std::size_t steps = 0;
  for (const auto& r : s.ranks) steps = std::max(steps, r.actions.size());
  if (steps == 0 || s.ranks.empty()) return {};
  const std::size_t ranks = s.ranks.size();
  const std::size_t digits = std::to_string(steps - 1).size();
  const std::size_t label_len = 5 + digits;  // "Step " + zero-padded number

  std::vector<std::vector<std::string>> cells(ranks);
  std::vector<std::size_t> width(ranks, 0);
  for (std::size_t r = 0; r < ranks; ++r) {
    for (const Action& a : s.ranks[r].actions) {
      cells[r].push_back(action_text(a, s.sub_actions));
      width[r] = std::max(width[r], cells[r].back().size());
    }
    // PyTorch zips the step labels into the width computation of the first `steps` columns.
    // Beyond those it raises IndexError; ppsched widens them to their header instead.
    if (r < steps)
      width[r] = std::max(width[r], label_len);
    else
      width[r] = std::max(width[r], 5 + std::to_string(r).size());
  }
  auto pad = [](std::string& out, std::string_view text, std::size_t w) {
    out += text;
    if (text.size() < w) out.append(w - text.size(), ' ');
  };

  std::string out(label_len + 2, ' ');
  for (std::size_t r = 0; r < ranks; ++r) {
    if (r) out += ' ';
    pad(out, "Rank " + std::to_string(r), width[r]);
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
      pad(out, t < cells[r].size() ? std::string_view(cells[r][t]) : std::string_view(), width[r]);
    }
    if (error_step && *error_step == t) out += " <-- ERROR HERE";
    out += '\n';
  }
  return out;
}

}  // namespace ppsched
