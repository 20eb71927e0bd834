// analyze() (analysis.hpp).
#include "sim/analysis.hpp"

#include <algorithm>

#include "sim/timed_rules.hpp"

namespace ppsched {

SimAnalysis analyze(const Schedule& s, const Timeline& t, const MemoryModel& memory) {
  SimAnalysis a;
  a.makespan = t.makespan;
  const std::size_t R = t.rank_count();
  a.ranks.resize(R);
  BubbleFold bubbles;
  for (std::size_t r = 0; r < R; ++r) {
    RankUsage& u = a.ranks[r];
    if (t.rank_begin[r] < t.rank_begin[r + 1]) u.first_action_start = t.start[t.rank_begin[r]];
    for (std::uint32_t e = t.rank_begin[r]; e < t.rank_begin[r + 1]; ++e)
      u.last_action_end = std::max(u.last_action_end, t.end[e]);
    bool any = false;
    double prev_end = 0;
    for (std::uint32_t e = t.rank_begin[r]; e < t.rank_begin[r + 1]; ++e) {
      if (t.stream[e] != Stream::Compute) continue;
      const double dur = busy_time(s.ranks[r].actions[t.step[e]].kind, t.start[e], t.end[e]);
      if (dur <= 0) continue;  // bookkeeping, or a blocking comm
      if (!any) {
        u.first_start = t.start[e];
        u.warmup = t.start[e];
        any = true;
      } else if (t.start[e] > prev_end) {
        // Who released this action decides the cause (split_idle_gap).
        const std::uint32_t by = t.released_by[e];
        ReleaseCause cause = ReleaseCause::None;
        bool by_other_rank = false;
        double by_end = 0;
        if (by != Timeline::kNone) {
          const std::uint32_t br = t.rank_of(by);
          cause = !t.device_turn.empty() && t.device_turn[e]           ? ReleaseCause::Device
                  : is_send_recv(s.ranks[br].actions[t.step[by]].kind) ? ReleaseCause::Comm
                                                                       : ReleaseCause::Other;
          by_other_rank = br != r;
          by_end = t.end[by];
          if (cause == ReleaseCause::Comm) {  // a comm releases when its transfer ends: when did it begin?
            if (t.transfer_begin.empty())
              by_end = prev_end;  // a timeline that does not say: all of the gap is transfer
            else if (t.transfer_begin[by] >= 0)
              by_end = t.transfer_begin[by];
          }
        }
        split_idle_gap(u, t.start[e] - prev_end, t.start[e], cause, by_other_rank, by_end);
      }
      u.busy += dur;
      prev_end = std::max(prev_end, t.end[e]);
      u.last_end = prev_end;
    }
    bubbles.add_rank(u, any, t.makespan);
  }
  bubbles.set_ratios(a, R, t.makespan);
  a.memory = compute_memory(s, t, memory);
  return a;
}

bool same_aggregates(const SimAnalysis& a, const SimAnalysis& b) {
  if (a.makespan != b.makespan || a.bubble_global != b.bubble_global || a.bubble_per_stage != b.bubble_per_stage ||
      a.ranks.size() != b.ranks.size() || a.memory.peak != b.memory.peak || a.memory.peak_time != b.memory.peak_time ||
      a.memory.in_bytes != b.memory.in_bytes)
    return false;
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    const RankUsage &x = a.ranks[r], &y = b.ranks[r];
    if (x.busy != y.busy || x.first_start != y.first_start || x.last_end != y.last_end || x.warmup != y.warmup ||
        x.cooldown != y.cooldown || x.dependency_wait != y.dependency_wait || x.comm_wait != y.comm_wait ||
        x.device_wait != y.device_wait || x.first_action_start != y.first_action_start ||
        x.last_action_end != y.last_action_end)
      return false;
  }
  return true;
}

}  // namespace ppsched
