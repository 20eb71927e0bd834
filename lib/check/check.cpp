#include "check/check.hpp"

#include <algorithm>
#include <exception>
#include <thread>

#include <fmt/format.h>

#include "check/check_support.hpp"
#include "check/rules_impl.hpp"
#include "ir/rank_halves.hpp"

namespace ppsched {

namespace {

constexpr std::uint32_t kind_bit(ActionKind k) { return 1u << static_cast<unsigned>(k); }

constexpr Rule kRules[] = {
    {"rank-count", RuleLevel::Error, "the schedule has a different number of ranks than expected",
     "give one row per rank (a blank line for a rank with no actions), or pass --ranks", &check::rank_count,
     /*reads_simulation=*/false, ProvenBy::Structure},
    {"stage-out-of-range", RuleLevel::Error, "an action names a stage the pipeline does not have",
     "stages run from 0 to stages-1; check --stages-per-rank or the action", &check::stage_out_of_range,
     /*reads_simulation=*/false, ProvenBy::Structure},
    {"microbatch-out-of-range", RuleLevel::Error, "an action names a microbatch beyond --microbatches",
     "microbatches run from 0 to microbatches-1", &check::microbatch_out_of_range, /*reads_simulation=*/false,
     ProvenBy::Structure},
    {"stage-on-two-ranks", RuleLevel::Error, "one stage's actions appear on two ranks",
     "each stage lives on one rank; move the action to the rank that runs the stage", &check::stage_on_two_ranks,
     /*reads_simulation=*/false, ProvenBy::Structure},
    {"stage-on-wrong-rank", RuleLevel::Error, "a stage runs on another rank than its placement says",
     "pass the placement the schedule was made for (--placement loop|v|list, or --schedule NAME)",
     &check::stage_on_wrong_rank, /*reads_simulation=*/false, ProvenBy::Structure},
    {"duplicate-action", RuleLevel::Error, "the same action appears twice",
     "each (stage, kind, microbatch) runs once; PyTorch's validator counts sets and lets this pass",
     &check::duplicate_action, /*reads_simulation=*/false, ProvenBy::Structure},
    {"missing-forward", RuleLevel::Error, "a stage never runs the forward of a microbatch",
     "every stage runs F once per microbatch", &check::missing_forward, /*reads_simulation=*/false,
     ProvenBy::Structure},
    {"missing-backward", RuleLevel::Error, "a stage never runs the backward of a microbatch",
     "every stage runs B, or I and W, once per microbatch", &check::missing_backward, /*reads_simulation=*/false,
     ProvenBy::Structure},
    {"backward-before-forward", RuleLevel::Error, "a backward runs before its forward on the same rank",
     "move the B or I after the F of the same stage and microbatch", &check::backward_before_forward,
     /*reads_simulation=*/false, ProvenBy::Structure},
    {"weight-before-input-grad", RuleLevel::Error, "a W runs before its I",
     "the weight gradient needs the input-gradient pass first: put I before W", &check::weight_before_input_grad,
     /*reads_simulation=*/false, ProvenBy::Structure},
    {"full-and-split-backward", RuleLevel::Error, "a microbatch gets both a full backward B and an I or W",
     "use B, or I and W, for each (stage, microbatch), not both", &check::full_and_split_backward,
     /*reads_simulation=*/false, ProvenBy::Structure},
    {"input-weight-count", RuleLevel::Error, "a stage runs I and W for different numbers of microbatches",
     "every I needs its W (PyTorch's validator checks the counts too)", &check::input_weight_count,
     /*reads_simulation=*/false, ProvenBy::Structure},
    {"send-without-recv", RuleLevel::Error, "a SEND has no matching RECV on the receiving rank",
     "every SEND_F(s, m) needs RECV_F(s+1, m) and every SEND_B(s, m) needs RECV_B(s-1, m)", &check::send_without_recv,
     /*reads_simulation=*/false, ProvenBy::StructureAndComms},
    {"recv-without-send", RuleLevel::Error, "a RECV has no matching SEND on the sending rank",
     "every RECV_F(s, m) needs SEND_F(s-1, m) and every RECV_B(s, m) needs SEND_B(s+1, m)", &check::recv_without_send,
     /*reads_simulation=*/false, ProvenBy::StructureAndComms},
    {"send-before-compute", RuleLevel::Error, "a SEND comes before the compute that produces its data",
     "put SEND_F(s, m) after F(s, m) and SEND_B(s, m) after I(s, m) or B(s, m)", &check::send_before_compute,
     /*reads_simulation=*/false, ProvenBy::StructureAndComms},
    {"comm-between-colocated-stages", RuleLevel::Error, "a SEND or RECV between two stages on the same rank",
     "stages on one rank (the middle of a V schedule) pass data locally; remove the SEND/RECV",
     &check::comm_between_colocated, /*reads_simulation=*/false, ProvenBy::StructureAndComms},
    {"unshard-reshard", RuleLevel::Error,
     "FSDP UNSHARD/RESHARD unbalanced, or compute on a stage whose parameters are resharded",
     "UNSHARD a stage before its first compute, RESHARD it after its last, once each (the runtime lowering "
     "does this: ppsched compile --lower runtime)",
     &check::unshard_reshard, /*reads_simulation=*/false, ProvenBy::Structure,
     kind_bit(ActionKind::Unshard) | kind_bit(ActionKind::Reshard)},
    {"reduce-grad-misplaced", RuleLevel::Error, "REDUCE_GRAD comes before a stage's last backward",
     "put REDUCE_GRAD right after the action that completes the stage's last weight gradient (B or W)",
     &check::reduce_grad, /*reads_simulation=*/false, ProvenBy::Structure, kind_bit(ActionKind::ReduceGrad)},
    {"comm-in-compute-only", RuleLevel::Error, "a compute-only schedule contains communication",
     "PyTorch's compute_only loader rejects it: remove SEND/RECV/UNSHARD/RESHARD/REDUCE_GRAD, or load it as "
     "compute_comms",
     &check::comm_in_compute_only},
    {"idle-in-compute-comms", RuleLevel::Error, "a compute_comms schedule has an idle cell",
     "PyTorch's runtime asserts on idle steps in a lowered schedule: remove the empty cells",
     &check::idle_in_compute_comms, /*reads_simulation=*/false, ProvenBy::Structure, kind_bit(ActionKind::Idle)},
    {"deadlock", RuleLevel::Error, "the schedule cannot finish: every remaining action waits for another",
     "follow the wait-for notes: an action waits for one that comes later on its rank or never comes", &check::deadlock,
     /*reads_simulation=*/true},
    {"input-grad-without-requires-grad", RuleLevel::Error,
     "an I (backward for the input gradient) runs on a stage with an input that does not require grad",
     "use B on that stage, or mark the input as not differentiable in the model; PyTorch's "
     "stage_backward_input asks autograd for the gradient of every input and fails with \"One of the "
     "differentiated Tensors does not require grad\"",
     &check::input_grad_without_requires_grad},
    {"input-grad-with-non-tensor-input", RuleLevel::Error,
     "an I (backward for the input gradient) runs on a stage with an input that is not a tensor",
     "use B on that stage, or build the non-tensor (a FlexAttention BlockMask, a config object) inside the stage; "
     "PyTorch's stage_backward_input reads requires_grad of every input and fails with \"AttributeError: "
     "'BlockMask' object has no attribute 'requires_grad'\" (pytorch/torchtitan#3584; no release is known to skip "
     "such inputs)",
     &check::input_grad_with_non_tensor_input},
    {"first-stage-input-grad", RuleLevel::Note,
     "an I on the first stage: PyTorch skips it and runs the whole backward in W",
     "the first stage's inputs need no gradient, so PyTorch's runtime skips its I and runs the whole backward in its "
     "W: splitting I from W buys nothing there; a B says the same thing",
     &check::first_stage_input_grad, /*reads_simulation=*/false, ProvenBy::Structure, kind_bit(ActionKind::I)},
    {"split-backward-recompute", RuleLevel::Warning,
     "a split backward (I and W) on a checkpointed stage: its forward is recomputed once in I and once per "
     "parameter group in W",
     "PyTorch's checkpoint recomputes a region once per backward call that reaches it; B is one call, I one more and "
     "W one per parameter group (9 for a Llama block), which is why Interleaved Zero Bubble lost to Interleaved 1F1B "
     "under full activation checkpointing (pytorch/torchtitan#773); use a full-backward schedule on checkpointed "
     "stages, or checkpoint less",
     &check::split_backward_recompute},
    {"max-bubble", RuleLevel::Error, "the simulated bubble ratio exceeds --max-bubble",
     "pick a schedule with less bubble (ppsched list; ppsched simulate shows where the idle time goes), more "
     "microbatches, or raise the threshold",
     &check::max_bubble, /*reads_simulation=*/true},
    {"max-memory", RuleLevel::Error,
     "a rank's peak memory (simulated activations, with a stage spec weights too; or PyTorch's activation slots) "
     "exceeds --max-memory",
     "pick a schedule that holds fewer microbatches (ppsched list shows each family's peak), or fewer stages per "
     "rank, or raise the threshold",
     &check::max_memory, /*reads_simulation=*/true},
};

// simulate refuses a schedule these find (check_structure). Left out, and why:
//   - input-weight-count: an I without its W is missing-backward, a W without its I is
//     weight-before-input-grad; the counts add nothing but a second error for one mistake;
//   - the send/recv rules (send-without-recv, recv-without-send, send-before-compute,
//     comm-between-colocated-stages) and deadlock: what they find is what the timed and lock-step
//     simulators are for; they report the deadlock with each stuck rank (exit 1);
//   - unshard-reshard, reduce-grad-misplaced, comm-in-compute-only, idle-in-compute-comms: what
//     PyTorch's loader or runtime would reject in the file's form (its FSDP actions, its dialect),
//     not which computation the schedule describes, which is what a simulation times;
//   - input-grad-without-requires-grad, first-stage-input-grad: about the model (a stage spec), not
//     the schedule;
//   - max-bubble, max-memory: thresholds on the simulation's own results.
constexpr std::string_view kStructuralRules[] = {
    "rank-count",
    "stage-out-of-range",
    "microbatch-out-of-range",
    "stage-on-two-ranks",
    "stage-on-wrong-rank",
    "duplicate-action",
    "missing-forward",
    "missing-backward",
    "backward-before-forward",
    "weight-before-input-grad",
    "full-and-split-backward",
};

// One rule at one level into `sink`, through a sink of its own so that one rule's thousand
// findings do not crowd out the others'; returns how many errors it found.
std::size_t run_rule(const Rule& rule, RuleLevel level, const CheckContext& ctx, DiagnosticSink& sink) {
  DiagnosticSink local(1000);
  rule.check(ctx, local);
  for (Diagnostic d : local.diagnostics()) {
    d.severity = level == RuleLevel::Error     ? Severity::Error
                 : level == RuleLevel::Warning ? Severity::Warning
                                               : Severity::Note;
    sink.report(std::move(d));
  }
  return level == RuleLevel::Error ? local.error_count() + local.dropped_errors() : 0;
}

}  // namespace

std::span<const Rule> rules() { return kRules; }

std::span<const std::string_view> structural_rule_ids() { return kStructuralRules; }

const Rule* find_rule(std::string_view id) {
  for (const Rule& r : kRules)
    if (r.id == id) return &r;
  return nullptr;
}

CheckContext context_for(const Schedule& s, std::vector<std::uint32_t> stage_to_rank, std::string file,
                         const SourceMap* source) {
  CheckContext ctx;
  ctx.schedule = &s;
  ctx.source = source && !source->rank_line.empty() ? source : nullptr;
  ctx.file = std::move(file);
  ctx.ranks = static_cast<std::uint32_t>(s.rank_count());
  ctx.stages = std::max<std::uint32_t>(stated_stages(s), static_cast<std::uint32_t>(stage_to_rank.size()));
  ctx.microbatches = stated_microbatches(s);
  ctx.stage_to_rank = std::move(stage_to_rank);
  ctx.placement_inferred = false;
  ctx.has_comms = has_comms(s);
  return ctx;
}

std::optional<std::pair<int, int>> parse_pytorch_version(std::string_view text) {
  // major '.' minor, then anything (".0", ".0a0+git1234", "+cu128"): only the release line counts.
  auto number = [&](std::size_t& i) -> std::optional<int> {
    std::size_t start = i;
    int v = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && i - start < 4) v = v * 10 + (text[i++] - '0');
    if (i == start || (i < text.size() && text[i] >= '0' && text[i] <= '9')) return std::nullopt;
    return v;
  };
  std::size_t i = 0;
  auto major = number(i);
  if (!major || i >= text.size() || text[i] != '.') return std::nullopt;
  ++i;
  auto minor = number(i);
  if (!minor) return std::nullopt;
  if (i < text.size() && text[i] != '.' && text[i] != '+' && text[i] != 'a' && text[i] != 'r' && text[i] != 'd')
    return std::nullopt;
  return std::pair{*major, *minor};
}

SourceLoc action_location(const CheckContext& ctx, std::size_t rank, std::size_t step) {
  SourceLoc loc;
  loc.file = ctx.file;
  // A stage that no rank runs has no place in the file: the finding is about the whole file.
  if (ctx.schedule && rank >= ctx.schedule->rank_count()) return loc;
  if (ctx.source && ctx.source->line(rank)) {
    loc.line = ctx.source->line(rank);
    loc.column = ctx.source->column(rank, step);
  } else {
    loc.path = fmt::format("$.programs[{}][{}]", rank, step);
  }
  return loc;
}

void run_checks(const CheckContext& ctx, DiagnosticSink& sink,
                const std::vector<std::pair<std::string, RuleLevel>>& levels) {
  auto level_of = [&](const Rule& rule) {
    RuleLevel level = rule.level;
    for (const auto& [id, l] : levels)
      if (id == rule.id) level = l;
    return level;
  };
  // The simulation (the deadlock rule's and the thresholds') reads the schedule only, and on a large
  // file it takes as long as the index and every other rule together: it runs on a second thread
  // meanwhile, and the rules that read it wait for it. It is what the first of them would have run.
  // A schedule large enough for the simulation to run on two threads itself (sim/aggregate.hpp)
  // keeps it on this one, after the other rules: three threads on two cores would only take turns.
  std::thread simulation;
  std::exception_ptr simulation_failed;
  struct Joiner {
    std::thread& thread;
    ~Joiner() {
      if (thread.joinable()) thread.join();
    }
  } joiner{simulation};
  if (!ctx.simulation && (level_of(*find_rule("deadlock")) != RuleLevel::Off || check::thresholds_simulate(ctx)) &&
      std::thread::hardware_concurrency() > 1 && second_half_start(*ctx.schedule) == ctx.schedule->rank_count())
    simulation = std::thread([&ctx, &simulation_failed] {
      try {
        check::simulation_of(ctx);
      } catch (...) {
        simulation_failed = std::current_exception();
      }
    });
  // A rule the one-pass proof speaks for is skipped, and the index is built only when a rule asks
  // for it (check::index_of): a clean file never pays for it. A context whose index is built
  // already runs every rule through it.
  const std::optional<check::CleanProof> proof =
      ctx.index ? std::nullopt : std::optional<check::CleanProof>(check::prove_clean(ctx));
  // What the proof saw stands in for the simulation's own pass over the actions; a simulation
  // already running on its thread reads the context, so it is left as it is.
  if (proof && proof->census && !ctx.census && !simulation.joinable()) ctx.census = proof->census;
  for (const Rule& rule : kRules) {
    const RuleLevel level = level_of(rule);
    if (level == RuleLevel::Off || (proof && check::proven_silent(*proof, rule))) continue;
    if (rule.reads_simulation && simulation.joinable()) {
      simulation.join();
      if (simulation_failed) std::rethrow_exception(simulation_failed);
    }
    run_rule(rule, level, ctx, sink);
  }
}

std::size_t check_structure(const CheckContext& ctx, DiagnosticSink& sink) {
  // A few bytes per (stage, microbatch), not the index; what the proof saw is kept for the simulation.
  if (check::CleanProof proof = check::prove_clean(ctx); proof.structural) {
    if (proof.census && !ctx.census) ctx.census = std::move(proof.census);
    return 0;
  }
  std::size_t errors = 0;
  for (std::string_view id : kStructuralRules) errors += run_rule(*find_rule(id), RuleLevel::Error, ctx, sink);
  return errors;
}

namespace check {

const ActionIndex& index_of(const CheckContext& ctx) {
  if (!ctx.index) ctx.index = std::make_shared<const ActionIndex>(ctx);
  return *ctx.index;
}

void report(const CheckContext& ctx, DiagnosticSink& sink, std::string_view rule, std::size_t rank, std::size_t step,
            std::string message, std::vector<Note> notes) {
  Diagnostic d;
  d.rule = std::string(rule);
  d.loc = action_location(ctx, rank, step);
  d.message = std::move(message);
  d.notes = std::move(notes);
  sink.report(std::move(d));
}

Note note_at(const CheckContext& ctx, std::size_t rank, std::size_t step, std::string message) {
  return Note{action_location(ctx, rank, step), std::move(message), {}};
}

}  // namespace check

}  // namespace ppsched
