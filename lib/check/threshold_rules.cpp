// CI thresholds: the bubble ratio and the peak memory per rank, from the same timed simulation as
// the deadlock rule (and as `ppsched simulate`, with the same costs).
#include <fmt/format.h>

#include "check/check_support.hpp"
#include "check/rules_impl.hpp"
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

void max_memory(const CheckContext& ctx, DiagnosticSink& sink) {
  if (ctx.max_memory < 0) return;
  const Simulation& sim = simulation_of(ctx);
  if (!sim.finished) return;
  const SimAnalysis& a = sim.analysis;
  for (std::size_t r = 0; r < a.memory.peak.size(); ++r)
    if (!fits_under_cap(a.memory.peak[r], ctx.max_memory))
      file_level(ctx, sink, "max-memory",
                 fmt::format("rank {} holds {:g} {} at t={:g}, over --max-memory {:g}", r, a.memory.peak[r],
                             a.memory.in_bytes ? "bytes of weights and activations" : "microbatches of activations",
                             a.memory.peak_time[r],
                             ctx.max_memory));
}

}  // namespace ppsched::check
