#include "trace/trace_analysis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <unordered_map>

#include "ir/action_text.hpp"
#include "ir/user_error.hpp"
#include "passes/passes.hpp"

namespace ppsched {

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2) return upper;
  return (upper + *std::max_element(v.begin(), v.begin() + std::ptrdiff_t(mid))) / 2;
}

bool is_measured_compute(ActionKind k) {
  return k == ActionKind::F || k == ActionKind::B || k == ActionKind::I || k == ActionKind::W;
}

// One message: which send and receive ends move it (stage of the sender, microbatch, direction).
struct MessageKey {
  std::uint32_t stage, microbatch;
  bool forward;
  bool operator<(const MessageKey& o) const {
    return std::tie(stage, microbatch, forward) < std::tie(o.stage, o.microbatch, o.forward);
  }
};

struct End {
  std::uint32_t rank = 0;
  const MeasuredAction* action = nullptr;
};

// The actions of step `s` of rank `r` (they are sorted by host start and grouped by step).
std::pair<const MeasuredAction*, const MeasuredAction*> step_actions(const MeasuredRank& r, std::uint32_t s) {
  auto lo = std::lower_bound(r.actions.begin(), r.actions.end(), s,
                             [](const MeasuredAction& a, std::uint32_t step) { return a.step < step; });
  auto hi = std::upper_bound(lo, r.actions.end(), s,
                             [](std::uint32_t step, const MeasuredAction& a) { return step < a.step; });
  return {r.actions.data() + (lo - r.actions.begin()), r.actions.data() + (hi - r.actions.begin())};
}

}  // namespace

TraceAnalysis analyze_traces(std::vector<MeasuredRank> ranks) {
  if (ranks.empty()) throw UserError("no trace to read");
  std::sort(ranks.begin(), ranks.end(), [](const MeasuredRank& a, const MeasuredRank& b) { return a.rank < b.rank; });
  const std::uint32_t world = ranks.front().world_size;
  for (const MeasuredRank& r : ranks)
    if (r.world_size != world)
      throw UserError(
          fmt::format("{} says the world holds {} ranks, {} says {}", r.file, r.world_size, ranks.front().file, world));
  for (std::size_t i = 1; i < ranks.size(); ++i)
    if (ranks[i].rank == ranks[i - 1].rank)
      throw UserError(fmt::format("{} and {} are both rank {}", ranks[i - 1].file, ranks[i].file, ranks[i].rank));
  for (std::uint32_t r = 0; r < world; ++r)
    if (r >= ranks.size() || ranks[r].rank != r)
      throw UserError(fmt::format("no trace of rank {} of the {}: give one file per rank of the pipeline", r, world));
  if (ranks.size() > world)
    throw UserError(fmt::format("{} is rank {}, beyond the world of {}", ranks.back().file, ranks.back().rank, world));

  TraceAnalysis a;
  // The steps: every rank must have profiled the same ones.
  std::vector<std::vector<std::uint32_t>> step_index(world);  // per rank, per common step: its index
  for (const MeasuredStep& s : ranks.front().steps) a.steps.push_back(s.number);
  for (const MeasuredRank& r : ranks) {
    for (const MeasuredStep& s : r.steps)
      if (std::find(a.steps.begin(), a.steps.end(), s.number) == a.steps.end())
        throw UserError(
            fmt::format("{} profiled ProfilerStep#{}, which {} did not: profile the same steps on every "
                        "rank",
                        r.file, s.number, ranks.front().file));
    for (std::uint64_t n : a.steps) {
      auto it = std::find_if(r.steps.begin(), r.steps.end(), [&](const MeasuredStep& s) { return s.number == n; });
      if (it == r.steps.end())
        throw UserError(fmt::format("{} has no ProfilerStep#{}, which {} has: profile the same steps on every rank",
                                    r.file, n, ranks.front().file));
      step_index[r.rank].push_back(static_cast<std::uint32_t>(it - r.steps.begin()));
    }
  }
  const std::size_t steps = a.steps.size();

  // The order as run: the first step's (a container's parts moved into the schedule's table);
  // later steps compared with it by their text.
  a.executed.ranks.resize(world);
  for (std::uint32_t r = 0; r < world; ++r) {
    const SubActionTable& subs = ranks[r].sub_actions;
    auto text_of_step = [&](std::size_t s) {
      std::vector<std::string> out;
      auto [b, e] = step_actions(ranks[r], step_index[r][s]);
      for (const MeasuredAction* x = b; x != e; ++x) out.push_back(action_text(x->action, subs));
      return out;
    };
    auto [b, e] = step_actions(ranks[r], step_index[r][0]);
    for (const MeasuredAction* x = b; x != e; ++x) {
      Action act = x->action;
      if (act.is_container()) act = Action::container(act.kind, a.executed.sub_actions.add(subs.group(act.group())));
      a.executed.ranks[r].actions.push_back(act);
    }
    const std::vector<std::string> first = text_of_step(0);
    for (std::size_t s = 1; s < steps; ++s)
      if (text_of_step(s) != first) a.same_order_every_step = false;
    if (a.executed.ranks[r].actions.empty())
      throw UserError(fmt::format("{} ran no PP action in ProfilerStep#{}", ranks[r].file, a.steps[0]));
  }
  a.executed.placement = placement_of(a.executed);

  // Clocks: each SEND and its RECV end together.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<double>> differences;  // (a<b) -> off_b - off_a
  std::vector<std::pair<End, End>> pairs;                                              // send end, receive end
  for (std::size_t s = 0; s < steps; ++s) {
    std::map<MessageKey, End> sends, receives;
    for (std::uint32_t r = 0; r < world; ++r) {
      auto [b, e] = step_actions(ranks[r], step_index[r][s]);
      for (const MeasuredAction* x = b; x != e; ++x) {
        if (!x->has_gpu || !x->action.has_microbatch()) continue;
        const Action& act = x->action;
        const std::uint32_t mb = act.microbatch();
        switch (act.kind) {
          case ActionKind::SendF:
            sends[{act.stage, mb, true}] = {r, x};
            break;
          case ActionKind::SendB:
            sends[{act.stage, mb, false}] = {r, x};
            break;
          case ActionKind::RecvF:
            if (act.stage > 0) receives[{std::uint32_t(act.stage - 1), mb, true}] = {r, x};
            break;
          case ActionKind::RecvB:
            receives[{std::uint32_t(act.stage + 1), mb, false}] = {r, x};
            break;
          default:
            break;
        }
      }
    }
    for (const auto& [key, send] : sends) {
      auto it = receives.find(key);
      if (it == receives.end() || it->second.rank == send.rank) continue;
      const End& recv = it->second;
      pairs.push_back({send, recv});
      const double d = recv.action->gpu_end - send.action->gpu_end;  // off_recv - off_send
      if (send.rank < recv.rank)
        differences[{send.rank, recv.rank}].push_back(d);
      else
        differences[{recv.rank, send.rank}].push_back(-d);
    }
  }
  for (const auto& [send, recv] : pairs)
    a.pairs.push_back({send.rank, recv.rank, std::size_t(send.action - ranks[send.rank].actions.data()),
                       std::size_t(recv.action - ranks[recv.rank].actions.data())});
  a.clock_offset_us.assign(world, 0.0);
  {
    std::vector<bool> placed(world, false);
    std::deque<std::uint32_t> todo{0};
    placed[0] = true;
    std::map<std::pair<std::uint32_t, std::uint32_t>, double> med;
    for (auto& [k, v] : differences) med[k] = median(v);
    while (!todo.empty()) {
      const std::uint32_t r = todo.front();
      todo.pop_front();
      for (const auto& [k, d] : med) {
        const std::uint32_t other = k.first == r ? k.second : k.second == r ? k.first : world;
        if (other == world || placed[other]) continue;
        a.clock_offset_us[other] = a.clock_offset_us[r] + (k.first == r ? d : -d);
        placed[other] = true;
        todo.push_back(other);
      }
    }
  }
  const auto& off = a.clock_offset_us;

  // Transfers per hop, on the common clock: from the later of the two calls to the pair's end.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<double>> hop_times;
  for (const auto& [send, recv] : pairs) {
    const double start = std::max(send.action->gpu_start - off[send.rank], recv.action->gpu_start - off[recv.rank]);
    hop_times[{send.rank, recv.rank}].push_back(recv.action->gpu_end - off[recv.rank] - start);
  }
  for (auto& [k, v] : hop_times) a.hops.push_back({k.first, k.second, median(v), v.size()});

  // Costs per (stage, kind).
  std::map<std::pair<std::uint32_t, ActionKind>, std::vector<double>> samples;
  for (std::uint32_t r = 0; r < world; ++r)
    for (std::size_t s = 0; s < steps; ++s) {
      auto [b, e] = step_actions(ranks[r], step_index[r][s]);
      for (const MeasuredAction* x = b; x != e; ++x)
        if (x->has_gpu && is_measured_compute(x->action.kind))
          samples[{x->action.stage, x->action.kind}].push_back(x->gpu_busy);
    }
  for (auto& [k, v] : samples)
    a.costs.push_back({k.first, k.second, median(v), *std::min_element(v.begin(), v.end()),
                       *std::max_element(v.begin(), v.end()), v.size()});

  // Iteration time per step, and each rank's busy and idle time in it.
  a.idle.assign(world, RankIdle{});
  std::vector<Deviation> deviations;
  for (std::size_t s = 0; s < steps; ++s) {
    double t0 = INFINITY, t1 = -INFINITY;
    for (std::uint32_t r = 0; r < world; ++r) {
      auto [b, e] = step_actions(ranks[r], step_index[r][s]);
      for (const MeasuredAction* x = b; x != e; ++x)
        if (x->has_gpu) t0 = std::min(t0, x->gpu_start - off[r]), t1 = std::max(t1, x->gpu_end - off[r]);
    }
    if (!(t1 > t0)) throw UserError(fmt::format("no kernel ran in ProfilerStep#{}: was CUDA profiled?", a.steps[s]));
    a.iteration_us.push_back(t1 - t0);
    for (std::uint32_t r = 0; r < world; ++r) {
      auto [b, e] = step_actions(ranks[r], step_index[r][s]);
      std::vector<const MeasuredAction*> compute, receives;
      for (const MeasuredAction* x = b; x != e; ++x) {
        if (!x->has_gpu) continue;
        if (is_compute(x->action.kind)) compute.push_back(x);
        if (x->action.kind == ActionKind::RecvF || x->action.kind == ActionKind::RecvB) receives.push_back(x);
      }
      RankIdle& idle = a.idle[r];
      const double share = 1.0 / double(steps);
      if (compute.empty()) {
        idle.warmup_cooldown_us += (t1 - t0) * share;
        continue;
      }
      std::sort(compute.begin(), compute.end(),
                [](const MeasuredAction* x, const MeasuredAction* y) { return x->gpu_start < y->gpu_start; });
      idle.warmup_cooldown_us +=
          ((compute.front()->gpu_start - off[r] - t0) + (t1 - (compute.back()->gpu_end - off[r]))) * share;
      for (std::size_t i = 0; i < compute.size(); ++i) {
        const MeasuredAction* x = compute[i];
        idle.busy_us += x->gpu_busy * share;
        idle.other_us += std::max(0.0, x->gpu_end - x->gpu_start - x->gpu_busy) * share;  // between its kernels
        if (i + 1 == compute.size()) continue;
        const double g0 = x->gpu_end, g1 = compute[i + 1]->gpu_start;  // this rank's clock
        if (g1 <= g0) continue;
        const double gap = (g1 - g0) * share;
        // A receive that completes inside the gap held the GPU; else a host that launched the next
        // action only after the GPU went idle did.
        if (std::any_of(receives.begin(), receives.end(),
                        [&](const MeasuredAction* rv) { return rv->gpu_end > g0 && rv->gpu_end <= g1 + 1e-6; }))
          idle.receive_wait_us += gap;
        else if (compute[i + 1]->cpu_start > g0)
          idle.launch_gap_us += gap;
        else
          idle.other_us += gap;
      }
    }
  }
  a.median_iteration_us = median(a.iteration_us);
  {  // the first step as a Timeline
    Timeline& t = a.first_step;
    double t0 = INFINITY;
    for (std::uint32_t r = 0; r < world; ++r) {
      auto [b, e] = step_actions(ranks[r], step_index[r][0]);
      for (const MeasuredAction* x = b; x != e; ++x)
        if (x->has_gpu) t0 = std::min(t0, x->gpu_start - off[r]);
    }
    t.rank_begin.assign(1, 0);
    for (std::uint32_t r = 0; r < world; ++r) {
      auto [b, e] = step_actions(ranks[r], step_index[r][0]);
      for (const MeasuredAction* x = b; x != e; ++x) {
        const double start = (x->has_gpu ? x->gpu_start : x->cpu_start) - off[r] - t0;
        const double end = (x->has_gpu ? x->gpu_end : x->cpu_end) - off[r] - t0;
        const ActionKind k = x->action.kind;
        t.start.push_back(start);
        t.end.push_back(end);
        t.stream.push_back(k == ActionKind::SendF || k == ActionKind::SendB   ? Stream::Send
                           : k == ActionKind::RecvF || k == ActionKind::RecvB ? Stream::Recv
                                                                              : Stream::Compute);
        t.step.push_back(static_cast<std::uint32_t>(x - b));
        t.released_by.push_back(Timeline::kNone);
        t.peer.push_back(Timeline::kNone);
        t.makespan = std::max(t.makespan, end);
      }
      t.rank_begin.push_back(static_cast<std::uint32_t>(t.start.size()));
    }
  }
  // The actions furthest from their (stage, kind)'s median.
  std::map<std::pair<std::uint32_t, ActionKind>, double> med_of;
  for (const MeasuredCost& c : a.costs) med_of[{c.stage, c.kind}] = c.median_us;
  for (std::uint32_t r = 0; r < world; ++r)
    for (const MeasuredAction& x : ranks[r].actions) {
      if (!x.has_gpu || !is_measured_compute(x.action.kind)) continue;
      const double m = med_of[{x.action.stage, x.action.kind}];
      deviations.push_back({r, x.step, x.action, x.gpu_busy, m});
    }
  std::sort(deviations.begin(), deviations.end(), [](const Deviation& x, const Deviation& y) {
    return std::abs(x.measured_us - x.median_us) > std::abs(y.measured_us - y.median_us);
  });
  if (deviations.size() > 5) deviations.resize(5);
  a.deviations = std::move(deviations);
  a.ranks = std::move(ranks);
  return a;
}

CostModel measured_cost_model(const TraceAnalysis& a, std::uint32_t stages) {
  CostModel m;
  m.per_stage.assign(stages, KindCosts{});
  std::vector<std::array<bool, kActionKindCount>> seen(stages);
  for (const MeasuredCost& c : a.costs) {
    if (c.stage >= stages) continue;
    m.per_stage[c.stage][static_cast<std::size_t>(c.kind)] = c.median_us;
    seen[c.stage][static_cast<std::size_t>(c.kind)] = true;
  }
  const auto B = static_cast<std::size_t>(ActionKind::B), I = static_cast<std::size_t>(ActionKind::I),
             W = static_cast<std::size_t>(ActionKind::W);
  for (std::uint32_t s = 0; s < stages; ++s)
    if (!seen[s][B]) m.per_stage[s][B] = m.per_stage[s][I] + m.per_stage[s][W];
  return m;
}

Schedule compute_only(const Schedule& executed) {
  Schedule out = executed;
  for (ActionKind k : {ActionKind::SendF, ActionKind::RecvF, ActionKind::SendB, ActionKind::RecvB, ActionKind::Unshard,
                       ActionKind::Reshard, ActionKind::ReduceGrad})
    out = strip_kind(out, k);
  return out;
}

}  // namespace ppsched
