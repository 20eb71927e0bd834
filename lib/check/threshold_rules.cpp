// CI thresholds: the bubble ratio and the peak memory per rank, from the same timed simulation as
// the deadlock rule (and as `ppsched simulate`, with the same costs); under --memory-model
// pytorch-liveness the peak is PyTorch's slot count instead, from each rank's order alone.
#include <fmt/format.h>

#include "check/check_support.hpp"
#include "check/rules_impl.hpp"
#include "diag/units.hpp"
#include "sim/analysis.hpp"

namespace ppsched::check {

namespace {

void file_level(const CheckContext& ctx, DiagnosticSink& sink, std::string_view rule, std::string message) {
  Diagnostic d;
  d.rule = std::string(rule);
  d.loc.file = ctx.file;
  d.message = std::move(message);
  sink.report(std::move(d));
}

}  // namespace

MemoryModel memory_model(const CheckContext& ctx) {
  return ctx.stage_spec ? MemoryModel::from_stage_spec(*ctx.stage_spec, ctx.stage_to_rank, ctx.ranks) : MemoryModel{};
}

bool thresholds_simulate(const CheckContext& ctx) {
  return ctx.max_bubble >= 0 || (ctx.max_memory >= 0 && !ctx.memory_liveness);
}

void max_bubble(const CheckContext& ctx, DiagnosticSink& sink) {
  if (ctx.max_bubble < 0) return;
  const Simulation& sim = simulation_of(ctx);
  if (!sim.finished) return;  // the deadlock rule says why
  const SimAnalysis& a = sim.analysis;
  double ratio = ctx.bubble_per_stage ? a.bubble_per_stage : a.bubble_global;
  if (ratio > ctx.max_bubble)
    file_level(ctx, sink, "max-bubble",
               fmt::format("bubble ratio {:.4f} ({}) exceeds --max-bubble {:g}; makespan {:g} with {} costs", ratio,
                           ctx.bubble_per_stage ? "per stage: (max stage span - its compute) / max span"
                                                : "global: 1 - compute / (ranks x makespan)",
                           ctx.max_bubble, a.makespan, ctx.costs ? "the given" : "unit"));
}

const Liveness& liveness_of(const CheckContext& ctx) {
  if (!ctx.liveness) {
    auto live = std::make_shared<Liveness>();
    try {
      live->counts = activation_liveness(*ctx.schedule, ctx.stage_to_rank, ctx.microbatches,
                                         ctx.memory_liveness.value_or(LivenessGranularity::StageMicrobatch));
    } catch (const LivenessError& e) {
      live->error = e;
    }
    ctx.liveness = std::move(live);
  }
  return *ctx.liveness;
}

namespace {

// max-memory in PyTorch's slots. An order PyTorch's liveness refuses is a max-memory error: the
// threshold cannot be checked, and PyTorch's ValueError says why, with the rank it is about.
void max_memory_in_slots(const CheckContext& ctx, DiagnosticSink& sink) {
  const Liveness& live = liveness_of(ctx);
  const std::string_view granularity = liveness_granularity_name(*ctx.memory_liveness);
  if (live.error) {
    file_level(ctx, sink, "max-memory",
               fmt::format("PyTorch's activation liveness cannot analyse rank {}'s order, so --max-memory {:g} "
                           "cannot be checked in slots ({}): {}",
                           live.error->rank(), ctx.max_memory, granularity, live.error->what()));
    return;
  }
  const std::vector<std::uint32_t>& slots = live.counts->slots_per_rank;
  for (std::size_t r = 0; r < slots.size(); ++r)
    if (!fits_under_cap(slots[r], ctx.max_memory))
      file_level(ctx, sink, "max-memory",
                 fmt::format("rank {} holds {} activation slots (PyTorch's liveness, {}), over --max-memory {:g}", r,
                             slots[r], granularity, ctx.max_memory));
}

}  // namespace

void max_memory(const CheckContext& ctx, DiagnosticSink& sink) {
  if (ctx.max_memory < 0) return;
  if (ctx.memory_liveness) return max_memory_in_slots(ctx, sink);
  const Simulation& sim = simulation_of(ctx);
  if (!sim.finished) return;
  const SimAnalysis& a = sim.analysis;
  for (std::size_t r = 0; r < a.memory.peak.size(); ++r)
    if (!fits_under_cap(a.memory.peak[r], ctx.max_memory))
      file_level(ctx, sink, "max-memory",
                 a.memory.in_bytes
                     ? fmt::format("rank {} holds {} of weights and activations ({:.0f} bytes) at t={:g}, over "
                                   "--max-memory {:.0f} ({})",
                                   r, human_bytes(a.memory.peak[r]), a.memory.peak[r], a.memory.peak_time[r],
                                   ctx.max_memory, human_bytes(ctx.max_memory))
                     : fmt::format("rank {} holds {:g} microbatches of activations at t={:g}, over --max-memory {:g}",
                                   r, a.memory.peak[r], a.memory.peak_time[r], ctx.max_memory));
}

}  // namespace ppsched::check
