#include "targets.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>

#include "auto/auto_schedule.hpp"
#include "auto/greedy.hpp"
#include "auto/variants.hpp"
#include "check/check.hpp"
#include "io/byte_sink.hpp"
#include "ir/user_error.hpp"
#include "model/comm.hpp"
#include "model/costs.hpp"
#include "model/network.hpp"
#include "model/partition.hpp"
#include "model/stage_model.hpp"
#include "parse/cost_table.hpp"
#include "parse/json_schedule.hpp"
#include "parse/model_json.hpp"
#include "parse/pytorch_csv.hpp"
#include "parse/runtime_params_json.hpp"
#include "parse/stage_spec_json.hpp"
#include "parse/topology_json.hpp"
#include "passes/passes.hpp"
#include "sim/aggregate.hpp"
#include "sim/analysis.hpp"
#include "sim/memory.hpp"
#include "sim/pytorch_steps.hpp"
#include "sim/timed.hpp"
#include "synth/synth.hpp"

namespace ppsched::fuzz {

using auto_detail::GreedyPolicy;

void fuzz_fail(const char* what) {
  std::fprintf(stderr, "fuzz property failed: %s\n", what);
  std::abort();
}

namespace {

std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

void csv(const std::uint8_t* data, std::size_t size, bool lenient) {
  DiagnosticSink sink;
  CsvReadOptions opt;
  opt.lenient = lenient;
  auto parsed = read_pytorch_csv_text("fuzz.csv", as_text(data, size), opt, sink);
  if (parsed.has_value() == sink.has_errors()) fuzz_fail("the CSV reader's result disagrees with its diagnostics");
}

void csv_strict(const std::uint8_t* d, std::size_t n) { csv(d, n, false); }
void csv_lenient(const std::uint8_t* d, std::size_t n) { csv(d, n, true); }

void json_schedule(const std::uint8_t* d, std::size_t n) {
  DiagnosticSink sink;
  auto parsed = read_json_schedule_text("fuzz.json", as_text(d, n), {}, sink);
  if (parsed.has_value() == sink.has_errors()) fuzz_fail("the JSON reader's result disagrees with its diagnostics");
}

void cost_table(const std::uint8_t* d, std::size_t n) {
  DiagnosticSink sink;
  CostModel model = CostModel::uniform(8, 1, unit_costs());
  bool ok = read_cost_text("fuzz.costs", std::string(as_text(d, n)), model, sink);
  if (ok == sink.has_errors()) fuzz_fail("the cost reader's result disagrees with its diagnostics");
  for (const auto& stage : model.per_stage)
    for (double c : stage)
      if (!(c >= 0) || c == 1.0 / 0.0) fuzz_fail("a cost table was accepted with a negative, NaN or infinite cost");
}

void stage_spec(const std::uint8_t* d, std::size_t n) {
  DiagnosticSink sink;
  auto spec = read_stage_spec_text("fuzz.json", as_text(d, n), 4, sink);
  if (spec.has_value() == sink.has_errors()) fuzz_fail("the stage spec reader's result disagrees with its diagnostics");
  if (spec && spec->size() != 4) fuzz_fail("a stage spec was accepted with the wrong stage count");
}

void topology(const std::uint8_t* d, std::size_t n) {
  DiagnosticSink sink;
  auto topo = read_topology_text("fuzz.json", as_text(d, n), 4, sink);
  if (topo.has_value() == sink.has_errors()) fuzz_fail("the topology reader's result disagrees with its diagnostics");
  if (!topo) return;
  for (std::uint32_t from = 0; from < 4; ++from)
    for (std::uint32_t to = 0; to < 4; ++to) {
      const Link& l = topo->link(from, to);
      if (!(l.latency_us >= 0) || !(l.bytes_per_us > 0) || l.bytes_per_us == 1.0 / 0.0)
        fuzz_fail("a topology was accepted with a negative latency or a bandwidth that is not positive and finite");
    }
}

// What the runtime parameters reader accepts is a figure the megatron model can use.
void runtime_params(const std::uint8_t* d, std::size_t n) {
  DiagnosticSink sink;
  auto p = read_runtime_params_text("fuzz.json", as_text(d, n), sink);
  if (p.has_value() == sink.has_errors())
    fuzz_fail("the runtime parameters reader's result disagrees with its diagnostics");
  if (!p) return;
  if (p->runtime != "megatron") fuzz_fail("runtime parameters were accepted for a runtime that has none");
  if (!(p->p2p_call_overhead_us >= 0) || p->p2p_call_overhead_us == 1.0 / 0.0)
    fuzz_fail("runtime parameters were accepted with a negative, NaN or infinite call overhead");
}

// A model the reader accepts can be costed and split: every layer has finite, non-negative times
// and bytes on a GPU, and the balanced split and its stages derive without an error.
void model_file(const std::uint8_t* d, std::size_t n) {
  DiagnosticSink sink;
  auto m = read_model_text("fuzz.json", as_text(d, n), sink);
  if (m.has_value() == sink.has_errors()) fuzz_fail("the model reader's result disagrees with its diagnostics");
  if (!m) return;
  const GpuSpec* gpu = find_gpu("h100");
  try {
    check_network(*m);
    for (const Layer& l : m->layers) {
      const LayerCost c = layer_cost(*m, l, gpu, 2);
      for (double x : {c.f_us, c.i_us, c.w_us, c.activation_bytes, c.weight_grad_bytes, c.output_bytes, c.static_bytes})
        if (!(x >= 0)) fuzz_fail("a layer of an accepted model costs a negative or NaN amount");
    }
    if (m->block_count() > 64) return;  // the balanced split is quadratic in the blocks
    for (std::uint32_t stages = 1; stages <= std::min<std::uint32_t>(4, m->block_count()); ++stages) {
      const StageModel s = derive_stages(*m, balanced_partition(*m, stages, gpu, 1), gpu, 1);
      if (s.spec.size() != stages || s.costs.per_stage.size() != stages) fuzz_fail("a derived stage count differs");
    }
  } catch (const ModelError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    fuzz_fail("a model the reader accepted could not be costed or split");
  }
}

// Parse, write, parse again: the same IR; and writing it again gives the same bytes.
void roundtrip(const std::uint8_t* d, std::size_t n) {
  std::string_view text = as_text(d, n);
  const bool json =
      text.find_first_not_of(" \t\r\n") != std::string_view::npos && text[text.find_first_not_of(" \t\r\n")] == '{';
  DiagnosticSink sink;
  auto first =
      json ? read_json_schedule_text("fuzz.json", text, {}, sink) : read_pytorch_csv_text("fuzz.csv", text, {}, sink);
  if (!first) return;
  std::string written = json ? to_json_schedule(first->schedule) : to_pytorch_csv(first->schedule);
  DiagnosticSink sink2;
  auto second = json ? read_json_schedule_text("fuzz.json", written, {}, sink2)
                     : read_pytorch_csv_text("fuzz.csv", written, {}, sink2);
  if (!second) fuzz_fail("a schedule that was read does not read back after writing");
  if (!same_schedule(first->schedule, second->schedule)) fuzz_fail("write then read changed the schedule");
  std::string again = json ? to_json_schedule(second->schedule) : to_pytorch_csv(second->schedule);
  if (again != written) fuzz_fail("writing the re-read schedule gave other bytes");
}

// Any schedule that parses goes through validate, every lowering pass and both simulators, and
// the validator's deadlock verdict is the timed simulator's.
void pipeline(const std::uint8_t* d, std::size_t n) {
  std::string_view text = as_text(d, n);
  DiagnosticSink sink;
  CsvReadOptions lenient;
  lenient.lenient = true;
  auto parsed = read_pytorch_csv_text("fuzz.csv", text, lenient, sink);
  if (!parsed) return;
  const Schedule& s = parsed->schedule;
  if (s.action_count() > 20000) return;  // keep each input fast; size limits are the readers' job
  Placement placement = infer_placement(s);
  const std::uint32_t stages = stages_in_use(s);
  std::vector<std::uint32_t> stage_to_rank = placement.stage_to_rank;
  stage_to_rank.resize(stages, 0);
  for (auto& r : stage_to_rank)
    if (r >= s.rank_count()) r = 0;

  CheckContext ctx = context_for(s, stage_to_rank, "fuzz.csv", &parsed->source);
  ctx.placement_inferred = true;  // the placement above was inferred from the schedule
  DiagnosticSink findings(1000000);
  run_checks(ctx, findings);  // every rule runs (none may crash); the verdict below is the deadlock rule's
  bool rule_says_deadlock = false;
  for (const auto& f : findings.diagnostics()) rule_says_deadlock |= f.rule == "deadlock";

  bool finished = true;
  TimedOptions opt;
  opt.costs = CostModel::uniform(stages, 1, unit_costs());
  try {
    Timeline t = simulate_timed(s, stage_to_rank, opt);
    const MemoryModel memory;
    if (!same_aggregates(analyze(s, t, memory), simulate_aggregates(s, stage_to_rank, opt, memory)))
      fuzz_fail("simulate_aggregates disagrees with analyze(simulate_timed)");
  } catch (const TimedDeadlock&) {
    finished = false;
  }
  if (find_stuck(s, stage_to_rank).empty() != finished) fuzz_fail("find_stuck disagrees with the timed simulator");
  if (rule_says_deadlock == finished) fuzz_fail("the deadlock rule disagrees with the timed simulator");

  // Eager sends (every SEND completes without its RECV): the three runs agree again, and an eager
  // SEND only ever waits for less, so what finishes under rendezvous finishes under eager.
  TimedOptions eager = opt;
  eager.send = SendMode{SendMode::Kind::Eager};
  bool finished_eager = true;
  try {
    Timeline t = simulate_timed(s, stage_to_rank, eager);
    const MemoryModel memory;
    if (!same_aggregates(analyze(s, t, memory), simulate_aggregates(s, stage_to_rank, eager, memory)))
      fuzz_fail("simulate_aggregates disagrees with analyze(simulate_timed) under eager sends");
  } catch (const TimedDeadlock&) {
    finished_eager = false;
  }
  if (find_stuck(s, stage_to_rank, eager).empty() != finished_eager)
    fuzz_fail("find_stuck disagrees with the timed simulator under eager sends");
  if (finished && !finished_eager) fuzz_fail("a schedule that finishes under rendezvous deadlocks under eager sends");

  try {
    simulate_pytorch_steps(s, stage_to_rank, stages);
  } catch (const SimDeadlock&) {
  } catch (const UserError&) {  // PyTorch's KeyError cases, documented
  }
  // add_send_recv's two ways: the rounds, where they apply, give the round robin's output exactly.
  {
    const std::vector<std::uint32_t> inferred = placement_of(s).stage_to_rank;
    const std::uint32_t pipeline = stated_stages(s);
    if (std::optional<Schedule> by_rounds = add_send_recv_by_rounds(s, inferred, pipeline)) {
      try {
        const Schedule reference = add_send_recv_round_robin(s, inferred, pipeline);
        auto same_rank = [](const RankProgram& a, const RankProgram& b) { return a.actions == b.actions; };
        if (!std::equal(reference.ranks.begin(), reference.ranks.end(), by_rounds->ranks.begin(),
                        by_rounds->ranks.end(), same_rank))
          fuzz_fail("add_send_recv by rounds differs from the round robin");
      } catch (const PassError&) {
        fuzz_fail("add_send_recv by rounds lowered what the round robin refuses");
      }
    }
  }
  // Both recipes, and the runtime one with PyTorch's lowering keywords (deferred RECVs, an
  // unbounded look-ahead).
  const std::function<Schedule(const Schedule&)> passes[] = {[](const Schedule& x) { return lower_runtime(x); },
                                                             [](const Schedule& x) {
                                                               return lower_runtime(x, {3, true});
                                                             },
                                                             [](const Schedule& x) {
                                                               return lower_runtime(x, {0, false});
                                                             },
                                                             [](const Schedule& x) { return lower_send_recv(x); }};
  for (const auto& pass : passes) {
    try {
      Schedule lowered = pass(s);
      TimedOptions lo;
      lo.costs = CostModel::uniform(stages_in_use(lowered), 1, unit_costs());
      std::vector<std::uint32_t> map = placement_of(lowered).stage_to_rank;
      map.resize(std::max<std::size_t>(map.size(), stages_in_use(lowered)), 0);
      for (auto& r : map)
        if (r >= lowered.rank_count()) r = 0;
      try {
        simulate_timed(lowered, map, lo);
      } catch (const TimedDeadlock&) {
      }
    } catch (const PassError&) {
    }
  }
}

// The pipeline's shape from the first three bytes: 1 to 8 ranks, 1 to max_microbatches, one chunk
// per rank or two (V).
AutoParams decoded_shape(const std::uint8_t* d, std::size_t n, std::uint32_t max_microbatches) {
  AutoParams a;
  a.ranks = 1 + (n > 0 ? d[0] : 0) % 8;
  a.microbatches = 1 + (n > 1 ? d[1] : 0) % max_microbatches;
  a.stages_per_rank = 1 + (n > 2 ? d[2] : 0) % 2;
  return a;
}

// A small pipeline decoded from the bytes (ranks, microbatches, one or two stages per rank,
// per-rank costs that may be zero, a fused backward cheaper or not, M_W, a cap or none, ranks in
// pairs on nodes or not) goes through the automatic search with a small budget. What it returns
// must be what it says: its makespan when simulated again, under the cap, valid, and no slower
// than any family of the same shape that fits. It may only refuse a cap that cannot hold one
// microbatch, or one under which nothing fits.
void auto_search(const std::uint8_t* d, std::size_t n) {
  auto byte = [&](std::size_t i) -> std::uint32_t { return i < n ? d[i] : 0; };
  AutoParams a = decoded_shape(d, n, 24);
  const std::uint32_t stages = a.ranks * a.stages_per_rank;
  KindCosts costs = unit_costs();
  costs[static_cast<std::size_t>(ActionKind::F)] = (byte(3) % 16) / 4.0;
  costs[static_cast<std::size_t>(ActionKind::I)] = (byte(4) % 16) / 4.0;
  costs[static_cast<std::size_t>(ActionKind::W)] = (byte(5) % 16) / 4.0;
  costs[static_cast<std::size_t>(ActionKind::B)] =
      (costs[static_cast<std::size_t>(ActionKind::I)] + costs[static_cast<std::size_t>(ActionKind::W)]) *
      (byte(6) % 2 ? 1.0 : 0.75);
  a.sim.costs = CostModel::uniform(stages, a.stages_per_rank, costs);
  const double weight_share = byte(7) % 2 ? 1.0 : 0.5;  // M_W = M_B or M_B / 2
  for (std::uint32_t s = 0; s < stages; ++s) {
    a.memory.activation.push_back(1.0 / a.stages_per_rank);
    a.memory.weight_grad.push_back(weight_share / a.stages_per_rank);
  }
  a.memory_cap = byte(8) % 5 == 0 ? 0.0 : (byte(9) % (4 * a.ranks + 1)) / 2.0;
  if (byte(10) % 2) {
    Topology topo;
    for (std::uint32_t r = 0; r < a.ranks; ++r) {
      topo.node_of_rank.push_back(r / 2);
      topo.slice_of_rank.push_back(0);
    }
    topo.inter_node.latency_us = (byte(11) % 8) / 4.0;
    a.sim.comm.topology = topo;
  }
  a.time_budget_s = 0.01;
  AutoResult r;
  try {
    r = auto_schedule(a);
  } catch (const UserError& e) {
    const std::string_view why = e.what();
    if (why.find("below what rank") == std::string_view::npos && why.find("no schedule fits") == std::string_view::npos)
      fuzz_fail("auto refused a pipeline for an undocumented reason");
    return;
  }
  const Schedule& s = r.schedule;
  auto again = try_simulate_aggregates(s, s.placement.stage_to_rank, a.sim, a.memory);
  if (!again) fuzz_fail("auto's schedule does not finish when simulated again");
  if (std::abs(again->makespan - r.best.makespan) > 1e-9 * std::max(1.0, r.best.makespan))
    fuzz_fail("auto's reported makespan is not its schedule's");
  if (!fits_under_cap(again->memory.max_peak(), a.memory_cap)) fuzz_fail("auto's schedule is over the cap");
  CheckContext ctx = context_for(s, s.placement.stage_to_rank, "auto", nullptr);
  DiagnosticSink findings(1000000);
  run_checks(ctx, findings);
  if (findings.has_errors()) fuzz_fail("auto's schedule does not validate");
  SynthParams sp;
  sp.ranks = a.ranks;
  sp.microbatches = a.microbatches;
  for (const Family& family : families()) {
    if (family.auto_search_order == 0) continue;  // not one of the search's candidates
    Schedule h;
    try {
      h = synthesize(family.name, sp);
    } catch (const SynthError&) {
      continue;
    }
    if (h.num_stages != stages) continue;
    auto hm = try_simulate_aggregates(h, h.placement.stage_to_rank, a.sim, a.memory);
    if (!hm || !fits_under_cap(hm->memory.max_peak(), a.memory_cap)) continue;
    if (again->makespan > hm->makespan * (1 + 1e-12) + 1e-12) fuzz_fail("auto is slower than a family that fits");
  }
}

// The greedy's steady-state copy (lib/auto/greedy.cpp): on a decoded pipeline with exact
// times (costs in quarters, per stage), every greedy variant, every V pattern replayed and
// squeezed, with and without a mark, builds exactly what it builds deciding every step. And V-Half
// and V-Min cut short (GreedyPolicy::guide_is_prefix) give the same run, or one that stops asking
// for more of the pattern.
void steady_state(const std::uint8_t* d, std::size_t n) {
  // Bytes: ranks, microbatches, chunks (and where to cut the patterns), stage 0's F, I and W, the
  // cap, flags, the mark; then the other stages' F, I and W when the flags say each stage has its
  // own.
  auto byte = [&](std::size_t i) -> std::uint32_t { return i < n ? d[i] : 0; };
  AutoParams a = decoded_shape(d, n, 48);
  const std::uint32_t stages = a.ranks * a.stages_per_rank;
  a.sim.costs = CostModel::uniform(stages, a.stages_per_rank, unit_costs());
  a.memory_cap = 1.0 + (byte(6) % (4 * a.ranks)) / 2.0;
  const bool per_stage = byte(7) % 2;  // each stage its own costs, or stage 0's for all
  const double weight_share = byte(7) & 2 ? 1.0 : 0.5;
  for (std::uint32_t s = 0; s < stages; ++s) {
    const std::size_t at = s == 0 || !per_stage ? 3 : 9 + 3 * (s - 1);
    auto& c = a.sim.costs.per_stage[s];
    c[static_cast<std::size_t>(ActionKind::F)] = (byte(at) % 16) / 4.0;
    c[static_cast<std::size_t>(ActionKind::I)] = (byte(at + 1) % 16) / 4.0;
    c[static_cast<std::size_t>(ActionKind::W)] = (byte(at + 2) % 16) / 4.0;
    c[static_cast<std::size_t>(ActionKind::B)] =
        c[static_cast<std::size_t>(ActionKind::I)] + c[static_cast<std::size_t>(ActionKind::W)];
    a.memory.activation.push_back(1.0 / a.stages_per_rank);
    a.memory.weight_grad.push_back(weight_share / a.stages_per_rank);
  }
  const auto_detail::Shape shape(a);
  if (!shape.exact_times) fuzz_fail("quarter costs are not exact times");
  std::vector<GreedyPolicy> policies = auto_detail::greedy_variants(a, shape);
  // One of the exploration round's switch combinations, chosen by the mark's byte.
  const std::vector<GreedyPolicy> more = auto_detail::exploration_variants(a, shape, policies);
  if (!more.empty()) policies.push_back(more[byte(8) % more.size()]);
  std::vector<Schedule> guides;
  SynthParams sp;
  sp.ranks = a.ranks;
  sp.microbatches = a.microbatches;
  if (a.stages_per_rank == 2)
    for (const char* family : {"ZBVZeroBubble", "VHalf", "VMin"}) guides.push_back(synthesize(family, sp));
  const std::uint64_t cut_slots = 1 + 3 * std::uint64_t{byte(2) / 2};
  for (const Schedule& g : guides) {
    policies.push_back({.target_cap = auto_detail::kNever, .guide = &g, .lookahead = 0});
    policies.push_back(
        {.target_cap = a.memory_cap, .guide = &g, .lookahead = 2, .free_cooldown = true, .shadow_lookahead = 6});
    // a window of 0 to 12, as the exploration round squeezes, chosen by the cap's byte
    policies.push_back(
        {.target_cap = a.memory_cap, .guide = &g, .lookahead = byte(6) / 16 % 13, .free_cooldown = true});
  }
  const double mark_share = 0.9 + (byte(8) % 16) / 100.0;  // a mark from 0.9 to 1.05 of the makespan
  for (GreedyPolicy pol : policies) {
    GreedyPolicy off = pol;
    off.copy_steady_state = false;
    const auto_detail::GreedyRun plain = auto_detail::greedy_run(shape, off);
    for (double mark : {auto_detail::kNever, plain.makespan * mark_share}) {
      if (mark != auto_detail::kNever && !plain.finished) continue;
      const auto_detail::GreedyRun decided = auto_detail::greedy_run(shape, off, mark);
      const auto_detail::GreedyRun copied = auto_detail::greedy_run(shape, pol, mark);
      if (copied.finished != decided.finished || copied.gave_up != decided.gave_up || copied.placed != decided.placed ||
          copied.programs != decided.programs)
        fuzz_fail("the steady-state copy built another schedule than deciding every step");
      if (copied.makespan != decided.makespan || copied.peak != decided.peak || copied.span != decided.span ||
          copied.same_with_shadow_lookahead != decided.same_with_shadow_lookahead)
        fuzz_fail("the steady-state copy measured its schedule otherwise than deciding every step");
      if (!pol.guide || pol.guide == &guides.front()) continue;  // V-Half and V-Min only
      bool complete = false;
      const Schedule cut = synthesize_prefix(pol.guide == &guides[1] ? "VHalf" : "VMin", sp, cut_slots, complete);
      GreedyPolicy on_cut = pol;
      on_cut.guide = &cut;
      on_cut.guide_is_prefix = !complete;
      const auto_detail::GreedyRun part = auto_detail::greedy_run(shape, on_cut, mark);
      if (part.guide_exhausted) {
        if (complete || part.finished) fuzz_fail("a run on a whole guide, or one that finished, asked for more guide");
        continue;
      }
      if (part.finished != copied.finished || part.gave_up != copied.gave_up || part.placed != copied.placed ||
          part.programs != copied.programs || part.makespan != copied.makespan ||
          part.same_with_shadow_lookahead != copied.same_with_shadow_lookahead)
        fuzz_fail("a run on a cut guide built another schedule than on the whole guide");
    }
  }
}

constexpr Target kTargets[] = {
    {"csv_strict", "PyTorch CSV reader, strict", csv_strict},
    {"csv_lenient", "PyTorch CSV reader, lenient (PyTorch's own reading)", csv_lenient},
    {"json_schedule", "ppsched JSON schedule reader", json_schedule},
    {"cost_table", "cost table reader (CSV or JSON)", cost_table},
    {"stage_spec", "stage spec reader", stage_spec},
    {"topology", "topology reader", topology},
    {"runtime_params", "runtime parameters reader (--runtime-params)", runtime_params},
    {"model_file", "model file reader; what it accepts can be costed and split", model_file},
    {"roundtrip", "parse, write, parse: same IR and same bytes (CSV and JSON)", roundtrip},
    {"pipeline", "validate, lower, both simulators; deadlock verdicts agree", pipeline},
    {"auto_search", "the automatic search on decoded pipelines: what it returns holds", auto_search},
    {"steady_state", "the greedy's steady-state copy builds what deciding every step builds; so does a cut guide",
     steady_state},
};

}  // namespace

std::span<const Target> targets() { return kTargets; }

const Target* find_target(std::string_view name) {
  for (const Target& t : kTargets)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace ppsched::fuzz
