// `ppsched validate`: lint schedules for what a GPU run would hit, before a job is queued.
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "check/check.hpp"
#include "check/expectations.hpp"
#include "cli_support.hpp"
#include "commands.hpp"
#include "diag/source_snippets.hpp"
#include "diag/suggest.hpp"
#include "exit_codes.hpp"
#include "io/input_file.hpp"
#include "model/cost_coverage.hpp"
#include "model/costs.hpp"
#include "parse/cost_table.hpp"
#include "parse/schedule_reader.hpp"
#include "parse/stage_spec_json.hpp"
#include "report/validate_formats.hpp"
#include "report/validate_json.hpp"
#include "report/validate_text.hpp"
#include "schedule_source.hpp"
#include "sim_inputs.hpp"
#include "synth/synth.hpp"

namespace ppsched::cli {

namespace {

struct ValidateOptions {
  std::vector<std::string> files;
  std::string expect;  // compute-only | compute-comms | "" (detect)
  std::uint32_t ranks = 0, stages_per_rank = 0, microbatches = 0;
  std::string placement;  // loop | v | comma-separated list
  std::string schedule;   // a family: its placement and stages per rank
  std::string input_format = "auto";
  bool lenient = false;
  std::string dialect = "current";
  std::vector<std::string> enable, disable;
  bool werror = false;
  bool list_rules = false;
  std::string explain;
  std::string format = "text";
  std::string stage_spec;
  double max_bubble = -1, max_memory = -1;
  MemoryModelOptions memory_model;  // pytorch-liveness: --max-memory counts slots
  std::string bubble_definition = "global";
  std::string costs;
  std::string fill = "none";
  std::string pytorch_version;
  std::string send_mode = "rendezvous";
  bool quiet = false;
  std::string docs_url = kDocsBaseUrl;
};

// The working directory, where CI runs from the repository root: SARIF's SRCROOT.
std::string current_directory() {
  std::error_code ec;
  std::string dir = std::filesystem::current_path(ec).string();
  return ec ? std::string() : dir;
}

// $GITHUB_STEP_SUMMARY, when GitHub Actions sets it: the step's Markdown summary, appended to.
void append_step_summary(const std::string& markdown) {
  const char* path = std::getenv("GITHUB_STEP_SUMMARY");
  if (!path || !*path) return;
  std::FILE* f = std::fopen(path, "a");
  const bool ok = f && std::fwrite(markdown.data(), 1, markdown.size(), f) == markdown.size();
  if (f) std::fclose(f);
  if (!ok) print_warning(std::string("could not append the findings table to $GITHUB_STEP_SUMMARY (") + path + ")");
}

int list_rules() {
  const std::string out = rules_text();
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

int explain(const std::string& id) {
  const Rule* r = find_rule(id);
  if (!r) {
    std::vector<std::string_view> ids;
    for (const Rule& x : rules()) ids.push_back(x.id);
    std::string msg = "unknown rule '" + id + "'";
    if (auto near = closest_match(id, ids)) msg += "; did you mean '" + *near + "'?";
    print_error(msg + " (see --list-rules)");
    return kExitUsage;
  }
  const std::string out = rule_explanation_text(*r);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

// What a readable file is checked against: what the flags say, the rest read off the file (each
// guess noted in `inferred`); nullopt, having said why, when the flags cannot be read or hold.
std::optional<CheckContext> make_context(const ValidateOptions& opt, const ParsedSchedule& p, const std::string& name,
                                         std::vector<Inference>& inferred) {
  Expectations want{.ranks = opt.ranks, .stages_per_rank = opt.stages_per_rank, .microbatches = opt.microbatches};
  want.expect_compute_only = opt.expect == "compute-only";
  if (const auto runtime = opt.schedule.empty() ? std::nullopt : runtime_class(opt.schedule)) {
    // As torchtitan runs a file: a single-stage class holds one stage per rank; a multi-stage one
    // takes the placement from the file, so nothing more is pinned.
    if (*runtime == RuntimeClass::Single && !want.stages_per_rank) want.stages_per_rank = 1;
  } else if (!opt.schedule.empty()) {
    const Family* f = find_family(opt.schedule);
    if (!f) {
      print_error(unknown_schedule_message(opt.schedule));
      return std::nullopt;
    }
    if (!want.stages_per_rank) want.stages_per_rank = f->default_stages_per_rank;
    want.style = f->placement;
  }
  try {
    parse_placement(opt.placement, want);
    ResolvedContext resolved = resolve_context(p.schedule, &p.source, name, want);
    inferred = std::move(resolved.inferred);
    return std::move(resolved.context);
  } catch (const std::invalid_argument& e) {  // not a placement, or a v placement the stages do not allow
    print_error(e.what());
    return std::nullopt;
  }
}

int run_validate(const ValidateOptions& opt) {
  if (opt.list_rules) return list_rules();
  if (!opt.explain.empty()) return explain(opt.explain);
  if (opt.files.empty()) {
    print_error("give one or more schedule files ('-' = stdin)");
    return kExitUsage;
  }
  std::vector<std::pair<std::string, RuleLevel>> levels;
  for (const auto& id : opt.disable) levels.emplace_back(id, RuleLevel::Off);
  for (const auto& id : opt.enable) levels.emplace_back(id, find_rule(id) ? find_rule(id)->level : RuleLevel::Error);
  for (const auto& [id, level] : levels)
    if (!find_rule(id)) return explain(id);  // says "unknown rule" with a suggestion
  bool filters_non_grad_inputs = false;
  if (!opt.pytorch_version.empty()) {
    auto v = parse_pytorch_version(opt.pytorch_version);
    if (!v) {
      print_error("--pytorch-version: '" + opt.pytorch_version + "' is not a PyTorch release such as 2.12 or 2.13.0");
      return kExitUsage;
    }
    filters_non_grad_inputs = *v >= std::pair{kPytorchFiltersNonGradInputs[0], kPytorchFiltersNonGradInputs[1]};
    // There the schedule runs: what is left is a portability warning. It goes first, so an
    // explicit --enable or --disable of the rule still wins (the last matching level applies).
    if (filters_non_grad_inputs)
      levels.insert(levels.begin(), {"input-grad-without-requires-grad", RuleLevel::Warning});
  }
  const SendMode send_mode = *parse_send_mode(opt.send_mode);  // the option's check admitted it
  if (!send_mode_has_sizes(send_mode, !opt.stage_spec.empty(), "--stage-spec")) return kExitUsage;
  int exit = kExitOk;
  std::vector<FileDiagnostics> files;  // for the formats that write one document at the end
  ValidateTally tally;
  for (const std::string& file : opt.files) {
    DiagnosticSink sink;
    ScheduleReadOptions read_opt;
    read_opt.format = *schedule_format_from_name(opt.input_format);
    read_opt.lenient = opt.lenient;
    read_opt.dialect = opt.dialect == "pre-2.6" ? ActionDialect::Pre26 : ActionDialect::Current;
    auto parsed = read_schedule(file, read_opt, sink);
    FileDiagnostics f;
    f.file = display_name(file);
    f.readable = parsed.has_value();
    std::optional<CheckContext> ctx;
    if (parsed) {
      ctx = make_context(opt, *parsed, display_name(file), f.inferred);
      if (!ctx) return kExitUsage;
      std::optional<std::vector<StageSpec>> spec;
      if (!opt.stage_spec.empty()) {
        spec = read_stage_spec(opt.stage_spec, ctx->stages, sink);
        if (!spec) {
          print_diagnostics(sink);
          return kExitUsage;
        }
        ctx->stage_spec = &*spec;
      }
      ctx->pytorch_filters_non_grad_inputs = filters_non_grad_inputs;
      ctx->send_mode = send_mode;
      ctx->max_bubble = opt.max_bubble;
      ctx->bubble_per_stage = opt.bubble_definition == "per-stage";
      ctx->max_memory = opt.max_memory;
      ctx->memory_liveness = opt.memory_model.liveness();
      std::optional<CostModel> costs;
      if (!opt.costs.empty()) {
        costs = CostModel::for_pipeline(ctx->ranks, ctx->stages);
        CostCoverage given;
        CostNeeds needs;
        needs.kinds = compute_kinds_by_stage(*ctx->schedule, ctx->stages);
        needs.filled_with = "the unit costs";
        if (!read_cost_file(opt.costs, *costs, sink, &given) ||
            !check_cost_coverage(display_name(opt.costs), given, needs, opt.fill == "unit", sink)) {
          print_diagnostics(sink);
          return kExitUsage;
        }
        ctx->costs = &*costs;
      }
      run_checks(*ctx, sink, levels);
    }
    f.diagnostics = sink.diagnostics();
    if (file != "-" && needs_snippets(f.diagnostics)) {  // a clean file is not read twice
      try {
        fill_snippets(f.diagnostics, read_whole_input(file, std::size_t{1} << 30));
      } catch (const IoError&) {
      }
    }
    count_findings(f, opt.werror);
    if (!f.readable)
      exit = std::max(exit, static_cast<int>(kExitUsage));
    else if (f.errors)
      exit = std::max(exit, static_cast<int>(kExitFindings));
    tally.add(f);
    if (opt.format != "text") {
      files.push_back(std::move(f));
      continue;
    }
    const std::string out = validate_text(f, false, opt.quiet);  // file by file, as each is checked
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  if (opt.format == "text" && opt.quiet) {
    const std::string out = tally.text();
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  if (opt.format != "text") {
    SarifOptions sarif{PPSCHED_VERSION, opt.docs_url, current_directory()};
    const std::string out = opt.format == "json"    ? validate_json(files)
                            : opt.format == "sarif" ? sarif_report(files, sarif)
                                                    : github_annotations(files);
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  if (opt.format == "github") append_step_summary(github_step_summary(files));
  return exit;
}

}  // namespace

void add_validate_command(CLI::App& app, std::vector<Command>& commands) {
  auto opt = std::make_shared<ValidateOptions>();
  CLI::App* sub = app.add_subcommand("validate", "Check schedules for errors a GPU run would hit (a linter for CI)");
  sub->add_option("FILE", opt->files, "Schedules to check: PyTorch CSV or ppsched JSON ('-' = stdin)");
  sub->add_option("--expect", opt->expect, "The file's format (default: detected)")
      ->check(CLI::IsMember({"compute-only", "compute-comms"}))
      ->option_text("compute-only|compute-comms");
  sub->add_option("--ranks", opt->ranks, "Ranks expected (default: the row count)")->check(CLI::Range(1u, 65535u));
  sub->add_option("--stages-per-rank", opt->stages_per_rank, "Stages per rank (default: inferred)")
      ->check(CLI::Range(1u, 65535u));
  sub->add_option("--microbatches", opt->microbatches, "Microbatches (default: inferred)")
      ->check(CLI::Range(1u, 4294967294u));
  sub->add_option("--placement", opt->placement, "loop, v, or the rank of each stage (0,1,1,0); default: inferred");
  sub->add_option("--schedule", opt->schedule,
                  "Take placement and stages per rank from this family, as torchtitan does");
  sub->add_option("--stage-spec", opt->stage_spec,
                  "Stage spec JSON: each stage's inputs and whether they require grad (docs/formats.md)");
  sub->add_option("--pytorch-version", opt->pytorch_version,
                  "The PyTorch release the schedule runs on (e.g. 2.12): 2.13 and later skip inputs that do not "
                  "require grad in an I, so input-grad-without-requires-grad becomes a warning (default: older)");
  add_send_mode_option(*sub, opt->send_mode);
  sub->add_option("--max-bubble", opt->max_bubble, "Fail when the simulated bubble ratio exceeds this (0 to 1)")
      ->check(finite_in(0.0, 1.0));
  sub->add_option("--bubble-definition", opt->bubble_definition,
                  "global (1 - compute / (ranks x makespan), default) or per-stage (Zero Bubble paper)")
      ->check(CLI::IsMember({"global", "per-stage"}))
      ->option_text("global|per-stage");
  sub->add_option("--max-memory", opt->max_memory,
                  "Fail when a rank's simulated peak memory exceeds this: microbatches of activation, or with "
                  "--stage-spec bytes of its stages' weights plus live activations (as simulate --memory-cap); with "
                  "--memory-model pytorch-liveness, PyTorch's activation slots")
      ->check(finite_positive());
  add_memory_model_options(*sub, opt->memory_model, "--max-memory");
  sub->add_option("--costs", opt->costs, "Cost table for the thresholds (default: unit costs)");
  sub->add_option("--fill", opt->fill,
                  "What --costs leaves out of what the schedule runs: none (an error, the default) or unit (unit "
                  "costs, with a warning)")
      ->check(CLI::IsMember({"none", "unit"}))
      ->option_text("none|unit");
  sub->add_option("--input-format", opt->input_format, "Input format (default: auto-detect)")
      ->check(CLI::IsMember({"auto", "csv", "json"}))
      ->option_text("auto|csv|json");
  sub->add_flag("--lenient", opt->lenient, "Accept every cell PyTorch's parser accepts, with a warning");
  add_dialect_option(*sub, opt->dialect);
  sub->add_option("--enable", opt->enable, "Enable a rule (repeatable)");
  sub->add_option("--disable", opt->disable, "Disable a rule (repeatable)");
  sub->add_flag("--werror", opt->werror, "Count warnings as errors");
  sub->add_flag("--list-rules", opt->list_rules, "List the rules and exit");
  sub->add_option("--explain", opt->explain, "Explain one rule and exit");
  sub->add_option("--format", opt->format,
                  "text (default), json, sarif (SARIF 2.1.0 for code scanning) or github (workflow annotations)")
      ->check(CLI::IsMember({"text", "json", "sarif", "github"}))
      ->option_text("text|json|sarif|github");
  sub->add_flag("-q,--quiet", opt->quiet,
                "Text format: print the findings and one summary line for the run, nothing for clean files");
  sub->add_option("--docs-url", opt->docs_url,
                  "SARIF: the base URL of ppsched's docs, for each rule's helpUri (default: " +
                      std::string(kDocsBaseUrl) + "; set it to where your copy is served)")
      ->check([](const std::string& url) {
        return url.rfind("https://", 0) == 0 || url.rfind("http://", 0) == 0
                   ? std::string()
                   : "'" + url + "' is not an absolute http(s) URL: code scanning links lead nowhere without one";
      });
  sub->footer("Example:\n  ppsched validate --schedule ZBVZeroBubble --quiet schedules/*.csv");
  commands.push_back({sub, [opt] { return run_validate(*opt); }});
}

}  // namespace ppsched::cli
