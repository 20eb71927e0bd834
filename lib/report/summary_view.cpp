// analyze() and the summary view (sim_views.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ir/action_text.hpp"
#include "report/sim_views.hpp"

namespace ppsched {

namespace {

// JSON numbers must be finite; timelines are, but guard the ratios of empty schedules.
double finite(double v) { return std::isfinite(v) ? v : 0.0; }

}  // namespace

SimAnalysis analyze(const Schedule& s, const Timeline& t, const MemoryModel& memory, double memory_cap) {
  SimAnalysis a;
  a.makespan = t.makespan;
  a.memory_cap = memory_cap;
  const std::size_t R = t.rank_count();
  a.ranks.resize(R);
  double total_busy = 0, max_span = 0, max_gap = 0;
  for (std::size_t r = 0; r < R; ++r) {
    RankUsage& u = a.ranks[r];
    bool any = false;
    double prev_end = 0;
    for (std::uint32_t e = t.rank_begin[r]; e < t.rank_begin[r + 1]; ++e) {
      if (t.stream[e] != Stream::Compute) continue;
      double dur = t.end[e] - t.start[e];
      const Action& act = s.ranks[r].actions[t.step[e]];
      if (dur <= 0 || is_send_recv(act.kind)) continue;  // bookkeeping, or a blocking comm
      if (!any) {
        u.first_start = t.start[e];
        u.warmup = t.start[e];
        any = true;
      } else if (t.start[e] > prev_end) {
        const double gap = t.start[e] - prev_end;
        // Who released this action decides the cause: a RECV means a transfer; a dependency on
        // another rank that ended before this start means its transfer time (implicit comms)
        // covers the end of the gap; anything else is waiting for a dependency.
        const std::uint32_t by = t.released_by[e];
        if (by == Timeline::kNone) {
          u.dependency_wait += gap;
        } else {
          const std::uint32_t br = t.rank_of(by);
          const Action& ba = s.ranks[br].actions[t.step[by]];
          if (is_send_recv(ba.kind)) {
            u.comm_wait += gap;
          } else if (br != r && t.end[by] < t.start[e]) {
            const double transfer = std::min(gap, t.start[e] - t.end[by]);
            u.comm_wait += transfer;
            u.dependency_wait += gap - transfer;
          } else {
            u.dependency_wait += gap;
          }
        }
      }
      u.busy += dur;
      prev_end = std::max(prev_end, t.end[e]);
      u.last_end = prev_end;
    }
    u.cooldown = any ? t.makespan - u.last_end : t.makespan;
    total_busy += u.busy;
    double span = any ? u.last_end - u.first_start : 0;
    max_span = std::max(max_span, span);
    max_gap = std::max(max_gap, span - u.busy);
  }
  a.bubble_global = (R && t.makespan > 0) ? 1.0 - total_busy / (double(R) * t.makespan) : 0.0;
  a.bubble_per_stage = max_span > 0 ? max_gap / max_span : 0.0;
  a.memory = compute_memory(s, t, memory);
  return a;
}

std::string summary_text(const SimAnalysis& a) {
  std::string out = fmt::format("makespan           {:g}\n", a.makespan);
  out += fmt::format("bubble ratio       {:.2f}% global (1 - compute / (ranks x makespan))\n",
                     100 * a.bubble_global);
  out += fmt::format("                   {:.2f}% per stage (Zero Bubble paper: (max stage span - its compute) / max span)\n",
                     100 * a.bubble_per_stage);
  std::size_t peak_rank = 0;
  for (std::size_t r = 0; r < a.memory.peak.size(); ++r)
    if (a.memory.peak[r] > a.memory.peak[peak_rank]) peak_rank = r;
  if (!a.memory.peak.empty())
    out += fmt::format("peak memory        {:g} {} (rank {} at t={:g}){}\n", a.memory.peak[peak_rank],
                       a.memory.in_bytes ? "bytes" : "microbatches", peak_rank, a.memory.peak_time[peak_rank],
                       a.memory_cap > 0 && a.memory.peak[peak_rank] > a.memory_cap
                           ? fmt::format("  EXCEEDS the cap of {:g}", a.memory_cap)
                           : "");
  out += "\nrank     busy     idle   busy%\n";
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    const RankUsage& u = a.ranks[r];
    out += fmt::format("{:>4} {:>8g} {:>8g} {:>6.1f}%\n", r, u.busy, a.makespan - u.busy,
                       a.makespan > 0 ? 100 * u.busy / a.makespan : 0.0);
  }
  return out;
}

nlohmann::ordered_json summary_json(const SimAnalysis& a) {
  nlohmann::ordered_json j;
  j["makespan"] = finite(a.makespan);
  j["bubble_ratio_global"] = finite(a.bubble_global);
  j["bubble_ratio_per_stage"] = finite(a.bubble_per_stage);
  j["bubble_definitions"] = {
      {"global", "1 - total compute time / (ranks x makespan)"},
      {"per_stage", "Zero Bubble paper: max over ranks of (span - compute) / max span; span = last compute end - first compute start"}};
  j["peak_memory"] = finite(a.memory.max_peak());
  j["memory_unit"] = a.memory.in_bytes ? "bytes" : "microbatches";
  if (a.memory_cap > 0) {
    j["memory_cap"] = a.memory_cap;
    j["memory_cap_exceeded"] = a.memory.max_peak() > a.memory_cap;
  }
  auto& ranks = j["ranks"] = nlohmann::ordered_json::array();
  for (const RankUsage& u : a.ranks)
    ranks.push_back({{"busy", finite(u.busy)}, {"idle", finite(a.makespan - u.busy)}});
  return j;
}

}  // namespace ppsched
