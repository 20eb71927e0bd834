// Activation memory over time (memory.hpp). Events are collected per rank, sorted by time with
// frees before allocations at the same instant (an action that ends exactly when another starts
// hands its memory over), and accumulated into a step function.
#include "sim/memory.hpp"

#include <algorithm>

namespace ppsched {

double MemoryProfile::max_peak() const {
  double m = 0;
  for (double p : peak) m = std::max(m, p);
  return m;
}

double MemoryModel::activation_of(std::uint32_t stage, std::size_t ranks, std::uint32_t stages) const {
  if (stage < activation.size()) return activation[stage];
  return (ranks && stages >= ranks) ? double(ranks) / stages : 1.0;
}

double MemoryModel::weight_grad_of(std::uint32_t stage, std::size_t ranks, std::uint32_t stages) const {
  return stage < weight_grad.size() ? weight_grad[stage] : activation_of(stage, ranks, stages);
}

MemoryModel MemoryModel::scaled(double factor, std::size_t ranks, std::uint32_t stages) const {
  MemoryModel out = *this;
  out.activation.resize(std::max<std::size_t>(stages, activation.size()));
  out.weight_grad.resize(out.activation.size());
  for (std::uint32_t st = 0; st < out.activation.size(); ++st) {
    out.activation[st] = activation_of(st, ranks, stages) * factor;
    out.weight_grad[st] = weight_grad_of(st, ranks, stages) * factor;
  }
  return out;
}

MemoryProfile compute_memory(const Schedule& s, const Timeline& t, const MemoryModel& model) {
  const std::size_t R = s.rank_count();
  const std::uint32_t stages = s.num_stages ? s.num_stages : infer_stage_count(s);
  auto act = [&](std::uint16_t stage) { return model.activation_of(stage, R, stages); };
  auto wgt = [&](std::uint16_t stage) { return model.weight_grad_of(stage, R, stages); };
  MemoryProfile out;
  out.in_bytes = model.in_bytes;
  out.per_rank.resize(R);
  out.peak.assign(R, 0);
  out.peak_time.assign(R, 0);
  struct Event {
    double time;
    double delta;
  };
  std::vector<Event> events;
  for (std::size_t r = 0; r < R; ++r) {
    events.clear();
    const auto& program = s.ranks[r].actions;
    std::uint32_t e = t.rank_begin[r];
    auto add = [&](const Action& a, double start, double end) {
      if (!a.has_stage()) return;
      switch (a.kind) {
        case ActionKind::F: events.push_back({start, act(a.stage)}); break;
        case ActionKind::I: events.push_back({end, -(act(a.stage) - wgt(a.stage))}); break;
        case ActionKind::W: events.push_back({end, -wgt(a.stage)}); break;
        case ActionKind::B: events.push_back({end, -act(a.stage)}); break;
        default: break;
      }
    };
    for (const Action& a : program) {
      if (a.is_idle()) continue;
      if (a.is_container()) {
        for (const Action& sub : s.subs(a)) add(sub, t.start[e], t.end[e]);
      } else {
        add(a, t.start[e], t.end[e]);
      }
      ++e;
    }
    std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
      return a.time < b.time || (a.time == b.time && a.delta < b.delta);
    });
    double base = r < model.fixed_per_rank.size() ? model.fixed_per_rank[r] : 0.0;
    double level = base;
    auto& points = out.per_rank[r];
    points.push_back({0.0, level});
    out.peak[r] = level;
    for (const Event& ev : events) {
      level += ev.delta;
      if (points.back().time == ev.time)
        points.back().value = level;
      else
        points.push_back({ev.time, level});
      if (level > out.peak[r] + 1e-12) {
        out.peak[r] = level;
        out.peak_time[r] = ev.time;
      }
    }
  }
  return out;
}

}  // namespace ppsched
