#include "sim/runtime.hpp"

#include <algorithm>
#include <cctype>

#include "passes/passes.hpp"
#include "sim/aggregate.hpp"
#include "sim/megatron.hpp"

namespace ppsched {

namespace {

std::string lowercase(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower;
}

}  // namespace

std::string_view runtime_name(Runtime r) {
  switch (r) {
    case Runtime::PyTorch:
      return "pytorch";
    case Runtime::Ideal:
      return "ideal";
    case Runtime::Megatron:
      return "megatron";
  }
  return "pytorch";
}

std::optional<Runtime> runtime_from_name(std::string_view name) {
  const std::string lower = lowercase(name);
  for (Runtime r : {Runtime::PyTorch, Runtime::Ideal, Runtime::Megatron})
    if (lower == runtime_name(r)) return r;
  return std::nullopt;
}

std::vector<std::string_view> runtime_names() { return {"pytorch", "ideal", "megatron"}; }

std::string_view runtime_summary(Runtime r) {
  switch (r) {
    case Runtime::PyTorch:
      return "pytorch: PyTorch's _PipelineScheduleRuntime (compute-only schedules lowered with its runtime "
             "recipe; sends and receives in program order; compute waits for its receives)";
    case Runtime::Ideal:
      return "ideal: the schedule as given, data moving as soon as it is produced (a lower bound)";
    case Runtime::Megatron:
      return "megatron: Megatron-LM (fused backward under a sync optimizer: its own schedules, synchronous p2p "
             "calls; otherwise the Zero Bubble runtime, asynchronous calls whose NCCL kernels slow compute while "
             "in flight; each call costs the compute stream a calibrated overhead)";
  }
  return "";
}

std::string_view optimizer_name(Optimizer o) { return o == Optimizer::Sync ? "sync" : "post-validated"; }

std::optional<Optimizer> optimizer_from_name(std::string_view name) {
  const std::string lower = lowercase(name);
  for (Optimizer o : {Optimizer::Sync, Optimizer::PostValidated})
    if (lower == optimizer_name(o)) return o;
  return std::nullopt;
}

std::string_view optimizer_summary(Optimizer o) {
  return o == Optimizer::Sync ? "sync: an iteration ends in a synchronizing optimizer step; it costs the makespan"
                              : "post-validated: iterations overlap; one costs the steady-state period, the longest "
                                "rank span (last compute end - first compute start)";
}

double iteration_time(const SimAnalysis& a, Optimizer o) {
  if (o == Optimizer::Sync) return a.makespan;
  double span = 0;
  for (const RankUsage& u : a.ranks) span = std::max(span, u.last_end - u.first_start);
  return span;
}

bool runtime_lowers(Runtime r, const Schedule& s) { return r == Runtime::PyTorch && !has_comms(s); }

Schedule schedule_as_run(const Schedule& s, Runtime r, const RuntimeLowering& keywords) {
  if (runtime_lowers(r, s)) return lower_runtime_recipe(s, keywords);
  if (r == Runtime::Megatron && has_comms(s)) {
    Schedule out = s;
    for (ActionKind k : {ActionKind::SendF, ActionKind::RecvF, ActionKind::SendB, ActionKind::RecvB})
      out = strip_kind(out, k);
    return out;
  }
  return s;
}

SimAnalysis simulate_runtime(const Schedule& run, const std::vector<std::uint32_t>& stage_to_rank,
                             const TimedOptions& opt, const MemoryModel& memory, const RuntimeModel& model,
                             Timeline* timeline, const LeafCensus* census) {
  if (model.runtime == Runtime::Megatron) {
    Timeline t = simulate_megatron(run, stage_to_rank, opt, model.params, model.optimizer);
    SimAnalysis a = analyze(run, t, memory);
    if (timeline) *timeline = std::move(t);
    return a;
  }
  // The aggregate run has no shared devices: they need the timeline's order of events.
  if (!timeline && !shares_devices(opt.device_of_rank))
    return simulate_aggregates(run, stage_to_rank, opt, memory, nullptr, census);
  Timeline own;
  Timeline& t = timeline ? *timeline : own;
  t = simulate_timed(run, stage_to_rank, opt);
  return analyze(run, t, memory);
}

}  // namespace ppsched
