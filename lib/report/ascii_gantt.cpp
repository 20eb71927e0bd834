#include "report/ascii_gantt.hpp"
#include "report/time_axis.hpp"
#include "report/timeline_shape.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace ppsched {
namespace {

// Symbols in tie-break order; the index is the slot of the per-column tally.
constexpr std::string_view kSymbols = "FBIWOurgc";
constexpr int kSlots = static_cast<int>(kSymbols.size());
constexpr std::array<std::string_view, kSlots> kMeaning = {
    "forward",     "backward",    "input grad",
    "weight grad", "OVERLAP_F_B", "UNSHARD",
    "RESHARD",     "REDUCE_GRAD", "send/recv on the compute stream"};
constexpr int kCoreSlots = 5;  // F B I W O: always in the legend

int slot_of(ActionKind k) {
  switch (k) {
    case ActionKind::F:
      return 0;
    case ActionKind::B:
      return 1;
    case ActionKind::I:
      return 2;
    case ActionKind::W:
      return 3;
    case ActionKind::OverlapFB:
      return 4;
    case ActionKind::Unshard:
      return 5;
    case ActionKind::Reshard:
      return 6;
    case ActionKind::ReduceGrad:
      return 7;
    case ActionKind::Idle:
      return -1;
    default:
      return 8;  // SEND_F, RECV_F, SEND_B, RECV_B
  }
}

std::string scale_line(std::size_t indent, std::size_t width, double makespan) {
  std::string line(indent + 2 + width, ' ');
  // Copied in place (the line is long enough): std::string::replace trips GCC 12's false
  // -Wrestrict (bug 105329).
  auto put = [&](std::size_t pos, const std::string& text) {
    std::copy(text.begin(), text.end(), line.begin() + static_cast<std::ptrdiff_t>(pos));
  };
  if (makespan <= 0) {
    put(indent + 1, "0");
  } else {
    // The makespan sits under the closing bar; round times go under their columns, spaced so
    // that no two labels touch.
    const std::string last = short_time_text(makespan);
    const std::size_t last_pos = indent + 1 + width + 1 - last.size();
    const double cols_per_unit = static_cast<double>(width) / makespan;
    const std::size_t wanted = std::max<std::size_t>(2, width / 10);
    double step = nice_axis_step(makespan / static_cast<double>(wanted));
    while (step * cols_per_unit < static_cast<double>(short_time_text(makespan).size() + 2))
      step = nice_axis_step(step * 1.5);
    std::size_t free_from = 0;  // first position a new label may use
    for (int k = 0;; ++k) {
      const double when = step * k;
      if (when >= makespan) break;
      const auto col = static_cast<std::size_t>(std::floor(when * cols_per_unit));
      const std::size_t pos = indent + 1 + col;
      const std::string text = short_time_text(when);
      if (pos < free_from || pos + text.size() + 1 > last_pos) continue;
      put(pos, text);
      free_from = pos + text.size() + 1;
    }
    put(last_pos, last);
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line + '\n';
}

}  // namespace

std::string ascii_gantt(const Schedule& s, const Timeline& t, const AsciiOptions& opt) {
  if (opt.width == 0) throw std::invalid_argument("ascii gantt: width must be at least 1");
  check_timeline_shape(s, t, "ascii gantt");
  const std::size_t n = t.size();
  const std::size_t ranks = s.rank_count();

  double makespan = std::isfinite(t.makespan) && t.makespan > 0 ? t.makespan : 0;
  if (makespan == 0)
    for (std::size_t e = 0; e < n; ++e)
      if (std::isfinite(t.end[e])) makespan = std::max(makespan, t.end[e]);

  const std::size_t width = opt.width;
  const std::size_t digits = std::to_string(ranks == 0 ? 0 : ranks - 1).size();
  const std::size_t indent = 5 + digits + 1;  // "rank " + number + ' '
  std::string out;
  out.reserve((indent + width + 3) * (ranks + 2) + 200);
  std::vector<std::array<double, kSlots>> tally(width);
  std::array<bool, kSlots> seen{};
  for (std::size_t r = 0; r < ranks; ++r) {
    for (auto& col : tally) col.fill(0);
    const std::size_t steps = s.ranks[r].actions.size();
    const std::uint32_t begin = t.rank_begin.empty() ? 0 : t.rank_begin[r];
    const std::uint32_t end = t.rank_begin.empty() ? 0 : t.rank_begin[r + 1];
    for (std::uint32_t e = begin; e < end; ++e) {
      if (t.step[e] >= steps)
        throw std::logic_error(
            fmt::format("ascii gantt: timeline entry {} of rank {} names step {}, its program "
                        "has {}",
                        e, r, t.step[e], steps));
      if (t.stream[e] != Stream::Compute) continue;
      const int slot = slot_of(s.ranks[r].actions[t.step[e]].kind);
      // Clip to the chart; NaN fails both comparisons and is dropped with empty intervals.
      const double a = std::max(t.start[e], 0.0), b = std::min(t.end[e], makespan);
      if (slot < 0 || !(b > a)) continue;
      seen[static_cast<std::size_t>(slot)] = true;
      const double cols_per_unit = static_cast<double>(width) / makespan;
      auto col = std::min(width - 1, static_cast<std::size_t>(a * cols_per_unit));
      for (; col < width; ++col) {
        const double c0 = makespan * static_cast<double>(col) / static_cast<double>(width);
        const double c1 = makespan * static_cast<double>(col + 1) / static_cast<double>(width);
        if (c0 >= b) break;
        const double part = std::min(b, c1) - std::max(a, c0);
        if (part > 0) tally[col][static_cast<std::size_t>(slot)] += part;
      }
    }
    const std::string num = std::to_string(r);
    out += "rank ";
    out.append(digits - num.size(), ' ');
    out += num;
    out += " |";
    const double col_time = makespan / static_cast<double>(width);
    for (std::size_t col = 0; col < width; ++col) {
      int best = -1;
      double best_time = 0, busy = 0;
      for (int k = 0; k < kSlots; ++k) {
        const double v = tally[col][static_cast<std::size_t>(k)];
        busy += v;
        if (v > best_time) {
          best = k;
          best_time = v;
        }
      }
      const bool idle = best < 0 || col_time - busy > best_time;
      out += idle ? '.' : kSymbols[static_cast<std::size_t>(best)];
    }
    out += "|\n";
  }

  if (opt.scale) out += scale_line(indent, width, makespan);
  if (opt.legend) {
    std::string legend;
    for (int k = 0; k < kSlots; ++k) {
      if (k >= kCoreSlots && !seen[static_cast<std::size_t>(k)]) continue;
      legend += fmt::format("{}{} {}", legend.empty() ? "" : ", ", kSymbols[static_cast<std::size_t>(k)],
                            kMeaning[static_cast<std::size_t>(k)]);
    }
    out += legend + ", . idle; 1 column = " + short_time_text(makespan / static_cast<double>(width)) + '\n';
  }
  return out;
}

}  // namespace ppsched
