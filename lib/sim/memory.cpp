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

MemoryModel MemoryModel::from_stage_spec(const std::vector<StageSpec>& spec,
                                         const std::vector<std::uint32_t>& stage_to_rank, std::uint32_t ranks) {
  MemoryModel m;
  m.in_bytes = true;
  m.fixed_per_rank.assign(ranks, 0.0);
  for (std::size_t st = 0; st < spec.size(); ++st) {
    const double m_b = spec[st].activation_memory_bytes;
    const double m_w = spec[st].weight_grad_memory();
    const Recompute& r = spec[st].recompute;
    if (!r.active()) {
      m.activation.push_back(m_b);
      m.weight_grad.push_back(m_w);
    } else {
      // A checkpointed forward keeps its region inputs; I recomputes, and what W reads stays
      // alive with the graph until W (model/recompute.hpp). Stage 0 skips I: nothing recomputed.
      const double kept = r.kept_memory_bytes < 0 ? spec[st].activation_bytes : r.kept_memory_bytes;
      m.activation.push_back(kept);
      const double held =
          r.held_for_weight_bytes >= 0 ? r.held_for_weight_bytes : std::min(std::max(m_b, kept), kept + m_w);
      m.weight_grad.push_back(st == 0 ? kept : held);
    }
    if (st < stage_to_rank.size() && stage_to_rank[st] < ranks)
      m.fixed_per_rank[stage_to_rank[st]] += spec[st].weight_bytes;
  }
  return m;
}

MemoryProfile compute_memory(const Schedule& s, const Timeline& t, const MemoryModel& model) {
  const std::size_t R = s.rank_count();
  const std::uint32_t stages = stated_stages(s);
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
      const MemoryDelta d = memory_delta(a.kind, act(a.stage), wgt(a.stage));
      if (d.when != MemoryDelta::Never) events.push_back({d.when == MemoryDelta::AtStart ? start : end, d.amount});
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

double sequential_peak(const Schedule& s, const MemoryModel& model) {
  const std::size_t R = s.rank_count();
  const std::uint32_t stages = stated_stages(s);
  std::vector<double> act(stages), wgt(stages);
  for (std::uint32_t st = 0; st < stages; ++st) {
    act[st] = model.activation_of(st, R, stages);
    wgt[st] = model.weight_grad_of(st, R, stages);
  }
  double highest = 0;
  for (std::size_t r = 0; r < R; ++r) {
    const double base = r < model.fixed_per_rank.size() ? model.fixed_per_rank[r] : 0.0;
    RunningPeak mem(base);
    auto apply = [&](const Action& a) {
      if (!a.has_stage()) return;
      // compute_memory's sizes; a stage beyond the stated count is sized as it sizes it
      const bool known = a.stage < stages;
      const double m_b = known ? act[a.stage] : model.activation_of(a.stage, R, stages);
      const double m_w = known ? wgt[a.stage] : model.weight_grad_of(a.stage, R, stages);
      const MemoryDelta d = memory_delta(a.kind, m_b, m_w);
      if (d.when == MemoryDelta::Never) return;
      mem.add(d.amount);
    };
    for (const Action& a : s.ranks[r].actions) {
      if (a.is_idle()) continue;
      if (a.is_container()) {
        // compute_memory places every allocation at the container's start and every free at its
        // end: allocations first.
        for (const Action& sub : s.subs(a))
          if (sub.kind == ActionKind::F) apply(sub);
        for (const Action& sub : s.subs(a))
          if (sub.kind != ActionKind::F) apply(sub);
      } else {
        apply(a);
      }
    }
    highest = std::max(highest, mem.peak);
  }
  return highest;
}

}  // namespace ppsched
