#include "diag/suggest.hpp"

#include <algorithm>
#include <vector>

namespace ppsched {

namespace {
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + cost});
      diag = up;
    }
  }
  return row[b.size()];
}

std::optional<std::string> closest_match(std::string_view word, std::span<const std::string_view> candidates) {
  std::size_t best = std::max<std::size_t>(1, word.size() / 3) + 1;
  std::optional<std::string> out;
  for (auto c : candidates) {
    // The distance is at least the difference in length: skip what cannot win. Without this a
    // long garbage cell (fuzzers make them; a reader may see a 1 MB one) costs its length times
    // every candidate's, once per cell.
    const std::size_t gap = word.size() > c.size() ? word.size() - c.size() : c.size() - word.size();
    if (gap >= best) continue;
    std::size_t d = edit_distance(word, c);
    if (d < best) {
      best = d;
      out = std::string(c);
    }
  }
  return out;
}

}  // namespace ppsched
