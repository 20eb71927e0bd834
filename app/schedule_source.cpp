#include "schedule_source.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <string_view>

#include "auto/auto_schedule.hpp"
#include "check/check.hpp"
#include "check/expectations.hpp"
#include "cli_support.hpp"
#include "diag/render.hpp"
#include "io/input_file.hpp"
#include "ir/user_error.hpp"
#include "parse/schedule_reader.hpp"
#include "passes/passes.hpp"
#include "report/preparation_error.hpp"
#include "sim/activation_liveness.hpp"
#include "synth/size_estimate.hpp"
#include "synth/synth.hpp"

namespace ppsched::cli {

void add_dialect_option(CLI::App& sub, std::string& dialect) {
  sub.add_option("--dialect", dialect,
                 "Action names of a CSV file: current (PyTorch 2.6 and later) or pre-2.6 (older PyTorch, where B was "
                 "the input-gradient backward and BW the full backward: read as I and B)")
      ->check(CLI::IsMember({"current", "pre-2.6"}))
      ->option_text("current|pre-2.6");
}

void add_lowering_keyword_options(CLI::App& sub, KeywordOptions& opt) {
  sub.add_flag("--defer-pp-recv", opt.defer_pp_recv,
               "Runtime lowering: move each RECV to just before its consumer, as PyTorch's defer_pp_recv=True does");
  sub.add_option("--max-active-stages", opt.max_active_stages,
                 "Runtime lowering: stages kept unsharded ahead, PyTorch's max_active_stages (default 3; 0 or less: "
                 "up to the next OVERLAP_F_B; none: Python's None)")
      ->check([](const std::string& v) -> std::string {
        if (v == "none") return {};
        std::size_t used = 0;
        try {
          (void)std::stoll(v, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        return used == v.size() && !v.empty() ? std::string() : "'" + v + "' is not an integer or none";
      })
      ->option_text("K|none");
}

LoweringKeywords lowering_keywords(const KeywordOptions& opt) {
  LoweringKeywords k;
  k.values.defer_pp_recv = k.defer_pp_recv_given = opt.defer_pp_recv;
  k.max_active_stages_given = !opt.max_active_stages.empty();
  if (opt.max_active_stages == "none")
    k.values.max_active_stages = std::nullopt;
  else if (k.max_active_stages_given)
    k.values.max_active_stages = std::stoll(opt.max_active_stages);
  return k;
}

void add_source_options(CLI::App& sub, SourceOptions& opt) {
  auto* file = sub.add_option("FILE", opt.input, "Schedule to read: PyTorch CSV or ppsched JSON ('-' = stdin)");
  auto* family = sub.add_option("--schedule", opt.schedule, "Family to synthesize instead (see `ppsched list`)");
  file->excludes(family);
  sub.add_option("--ranks", opt.ranks, "Pipeline ranks (with --schedule)")->check(CLI::Range(1u, 65535u));
  sub.add_option("--microbatches", opt.microbatches, "Microbatches per iteration (with --schedule)")
      ->check(CLI::Range(1u, 4294967294u));
  sub.add_option("--stages-per-rank", opt.stages_per_rank, "Stages per rank (default: the family's)")
      ->check(CLI::Range(1u, 65535u));
  sub.add_flag("--pytorch-compat", opt.pytorch_compat,
               "Reproduce PyTorch's output where it is wrong (1F1B's invalid pipeline_order)");
  sub.add_option("--input-format", opt.input_format, "Input format (default: auto-detect)")
      ->check(CLI::IsMember({"auto", "csv", "json"}))
      ->option_text("auto|csv|json");
  add_dialect_option(sub, opt.dialect);
  sub.add_flag("--lenient", opt.lenient,
               "Accept every cell PyTorch's parser accepts (e.g. '0F0x', '00F1'), with a warning");
  sub.add_option("--lower", opt.lower,
                 "Lowering: none (compute only, what torchtitan loads), send-recv (PyTorch's "
                 "_add_send_recv), runtime (validate, unshard/reshard, reduce-grad, send/recv), merge-bw (PyTorch's "
                 "_merge_bw: each I directly followed by the W of its stage and microbatch becomes one B)")
      ->check(CLI::IsMember({"none", "send-recv", "runtime", "merge-bw"}))
      ->option_text("none|send-recv|runtime|merge-bw");
  add_lowering_keyword_options(sub, opt.keywords);
  sub.add_option("--pytorch-commit", opt.pytorch_commit,
                 "Which PyTorch's lowering: new (cff2ecc8, default) or old (00722e64, without the lowering keywords)")
      ->check(CLI::IsMember({"old", "new", "cff2ecc8", "00722e64"}))
      ->transform([](std::string v) {
        return v == "cff2ecc8" ? std::string("new") : v == "00722e64" ? std::string("old") : v;
      })
      ->option_text("old|new");
  sub.add_option("--max-schedule-gib", opt.max_schedule_gib,
                 "Refuse a synthesis whose schedule would hold more than this many GiB (default 4)")
      ->check(finite_positive());
  sub.add_option(
         "--time-budget", opt.time_budget_s,
         "With --schedule auto: the search budget, in seconds of work at a nominal 10M simulated actions/s (default 1)")
      ->check(finite_positive());
}

bool within_size_budget(std::uint64_t ranks, std::uint64_t stages_per_rank, std::uint64_t microbatches, bool lowered,
                        double max_gib, const char* flag) {
  const auto [actions, gib] = estimate_schedule_size(ranks, stages_per_rank, microbatches, lowered);
  if (gib <= max_gib) return true;
  print_error(
      fmt::format("{} ranks x {} stages per rank x {} microbatches is about {:.3g} actions, {:.3g} GiB of schedule, "
                  "over the limit of {:.3g} GiB; raise it with {} if the machine has the memory",
                  ranks, stages_per_rank, microbatches, actions, gib, max_gib, flag));
  return false;
}

namespace {

// `--schedule auto`: the search of lib/auto, with the command's costs and memory cap.
std::optional<Schedule> auto_source(const SourceOptions& opt) {
  AutoParams p;
  p.ranks = opt.ranks;
  p.microbatches = opt.microbatches;
  p.stages_per_rank = opt.stages_per_rank ? opt.stages_per_rank : 1;
  p.memory_cap = opt.memory_cap;
  p.time_budget_s = opt.time_budget_s;
  if (opt.sim_inputs) p.optimizer = opt.sim_inputs->optimizer_model();
  if (p.stages_per_rank != 1 && p.stages_per_rank != 2) {
    print_error("--schedule auto: --stages-per-rank must be 1 (loop placement) or 2 (V placement)");
    return std::nullopt;
  }
  const Placement placement = Placement::for_shape(auto_placement(p.stages_per_rank), p.ranks, p.stages_per_rank);
  auto inputs = load_sim_inputs(opt.sim_inputs ? *opt.sim_inputs : SimInputOptions{}, p.ranks, placement.stage_to_rank);
  if (!inputs) return std::nullopt;
  p.sim = inputs->sim;
  // Under a slot cap the search counts slots (slot_memory_model), as tune's does.
  p.memory = opt.cap_liveness ? slot_memory_model(p.ranks * p.stages_per_rank) : inputs->memory;
  // Its answer is ranked under the runtime the command names (simulate's, compile's --runtime,
  // PyTorch's by default), with the same lowering keywords: never slower there than a family.
  const SimInputOptions defaults;
  const SimInputOptions& sim_opt = opt.sim_inputs ? *opt.sim_inputs : defaults;
  std::optional<RuntimeModel> model = load_runtime_model(sim_opt);
  if (!model) return std::nullopt;
  RankingRule rule;
  rule.how.runner = Runner::Runtime;
  rule.how.runtime = model->runtime;
  rule.how.keywords = lowering_keywords(opt.keywords);
  rule.how.old_pytorch = opt.pytorch_commit == "old";
  rule.model = *model;
  rule.model.optimizer = p.optimizer;
  rule.blocking_comms = sim_opt.blocking_comms;
  rule.liveness = opt.cap_liveness;
  rule.memory_cap = p.memory_cap;
  p.ranked_by = rule;
  try {
    AutoResult r = auto_schedule(p);
    const std::size_t n = r.tried.size();
    print_note(
        fmt::format("--schedule auto: chose {} ({} {} tried, minimising {} under --runtime {}; `ppsched tune` "
                    "compares it with every family)",
                    r.best.origin, n, n == 1 ? "candidate" : "candidates",
                    p.optimizer == Optimizer::Sync ? "the makespan (--optimizer sync)"
                                                   : "the longest rank span (--optimizer post-validated)",
                    runtime_name(model->runtime)));
    return std::move(r.schedule);
  } catch (const UserError& e) {
    print_error(e.what());
    return std::nullopt;
  }
}

std::optional<Schedule> source_schedule(const SourceOptions& opt, const Preparation& how, SourceMap& source,
                                        std::optional<InferredShape>& shape) {
  if (!opt.schedule.empty()) {
    const Family* f = find_family(opt.schedule);
    std::uint32_t v = opt.stages_per_rank ? opt.stages_per_rank : f ? f->default_stages_per_rank : 1;
    if (!within_size_budget(opt.ranks, v, opt.microbatches, how.lowers_compute_only(), opt.max_schedule_gib,
                            "--max-schedule-gib"))
      return std::nullopt;
  }
  if (!opt.schedule.empty())
    set_doing(fmt::format("{} {} for {} ranks and {} microbatches",
                          is_auto_schedule(opt.schedule) ? "searching for" : "synthesizing", opt.schedule, opt.ranks,
                          opt.microbatches));
  if (is_auto_schedule(opt.schedule)) return auto_source(opt);
  if (!opt.schedule.empty()) {
    SynthParams p;
    p.ranks = opt.ranks;
    p.microbatches = opt.microbatches;
    p.stages_per_rank = opt.stages_per_rank;
    p.pytorch_compat = opt.pytorch_compat;
    try {
      Schedule s = synthesize(opt.schedule, p);
      if (opt.pytorch_compat && find_family(opt.schedule)->name == "1F1B")
        print_warning(
            "--pytorch-compat: this is PyTorch's Schedule1F1B.pipeline_order, which is "
            "invalid: the last rank never runs F0 and runs one microbatch too many, so "
            "PyTorch's own _validate_schedule rejects it. Without the flag ppsched writes "
            "the order PyTorch's 1F1B runtime executes.");
      return s;
    } catch (const SynthError& e) {
      print_error(e.what());
      return std::nullopt;
    }
  }
  set_doing("reading " + display_name(opt.input));
  DiagnosticSink sink;
  ScheduleReadOptions read_opt;
  read_opt.format = *schedule_format_from_name(opt.input_format);
  read_opt.lenient = opt.lenient;
  read_opt.dialect = opt.dialect == "pre-2.6" ? ActionDialect::Pre26 : ActionDialect::Current;
  auto parsed = read_schedule(opt.input, read_opt, sink);
  print_diagnostics(sink);
  if (!parsed) return std::nullopt;
  source = std::move(parsed->source);
  shape = std::move(parsed->shape);
  return std::move(parsed->schedule);
}

}  // namespace

std::optional<Preparation> preparation_for(const SourceOptions& opt, Runner runner, Runtime runtime) {
  Preparation how;
  how.lower = *lowering_from_name(opt.lower);  // the flag's values are the names
  how.runner = runner;
  how.runtime = runtime;
  how.keywords = lowering_keywords(opt.keywords);
  if (const Family* f = opt.schedule.empty() ? nullptr : find_family(opt.schedule)) how.family = f->name;
  how.old_pytorch = opt.pytorch_commit == "old";
  try {
    how.check_keywords();
  } catch (const UserError& e) {
    print_error(e.what());
    return std::nullopt;
  }
  return how;
}

bool refuse_invalid_schedule(const SourceOptions& opt, bool force, const GivenSchedule& as_given,
                             std::shared_ptr<const LeafCensus>* census) {
  const bool file = opt.schedule.empty();
  const std::string name = file ? display_name(opt.input) : "--schedule " + opt.schedule;
  const CheckContext ctx =
      resolve_context(as_given.schedule, file ? &as_given.source : nullptr, name, {}, as_given.shape).context;
  DiagnosticSink first(1);
  const std::size_t n = check_structure(ctx, first);
  if (census) *census = ctx.census;
  if (n == 0) return false;
  const std::string what = file ? name : "the synthesized " + opt.schedule + " schedule";
  const std::string count = fmt::format("{} structural error{}; the first: {}", n, n == 1 ? "" : "s",
                                        render_one_line(first.diagnostics().front()));
  if (force) {
    print_warning(fmt::format("--force: simulating {}, which is not a valid schedule ({})", what, count));
    return false;
  }
  print_error(fmt::format(
      "{} is not a valid schedule ({}); {}pass --force to simulate it anyway", what, count,
      file ? fmt::format("run `ppsched validate {}{}` for all of them, or ", opt.lenient ? "--lenient " : "", name)
           : ""));
  return true;
}

std::optional<InferredShapeOf> shape_from_census(const Schedule& s, const LeafCensus* census) {
  if (!census || s.placement.style != PlacementStyle::Unspecified || s.num_stages || s.num_microbatches)
    return std::nullopt;
  return InferredShapeOf{Placement::explicit_map(census->stage_rank), census->stages, census->microbatches};
}

std::optional<GivenSchedule> read_source(const SourceOptions& opt, const Preparation& how) {
  if (opt.input.empty() == opt.schedule.empty()) {
    print_error("give either a schedule FILE or --schedule NAME (see ppsched list)");
    return std::nullopt;
  }
  if (!opt.schedule.empty() && (opt.ranks == 0 || opt.microbatches == 0)) {
    print_error("--schedule needs --ranks and --microbatches");
    return std::nullopt;
  }
  GivenSchedule given;
  std::optional<Schedule> s = source_schedule(opt, how, given.source, given.shape);
  if (!s) return std::nullopt;
  given.schedule = std::move(*s);
  return given;
}

std::optional<PreparedSchedule> prepare(GivenSchedule given, const Preparation& how) {
  set_doing("preparing the schedule (lowering)");
  try {
    return prepare_schedule(std::move(given.schedule), std::move(given.source), how);
  } catch (const PreparationError& e) {
    print_error(preparation_error_text(e));
    return std::nullopt;
  }
}

std::optional<PreparedSchedule> load_schedule(const SourceOptions& opt, Runner runner, Runtime runtime) {
  const std::optional<Preparation> how = preparation_for(opt, runner, runtime);
  if (!how) return std::nullopt;
  std::optional<GivenSchedule> given = read_source(opt, *how);
  if (!given) return std::nullopt;
  return prepare(std::move(*given), *how);
}

}  // namespace ppsched::cli
