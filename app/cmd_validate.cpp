// `ppsched validate`: lint schedules for what a GPU run would hit, before a job is queued.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>

#include "check/check.hpp"
#include "cli_support.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "ir/user_error.hpp"
#include "report/validate_formats.hpp"
#include "report/validate_json.hpp"
#include "report/validate_text.hpp"
#include "schedule_source.hpp"
#include "sim_inputs.hpp"
#include "validate_file.hpp"

namespace ppsched::cli {

namespace {

// The working directory, where CI runs from the repository root: SARIF's SRCROOT.
std::string current_directory() {
  std::error_code ec;
  std::string dir = std::filesystem::current_path(ec).string();
  return ec ? std::string() : dir;
}

int list_rules() {
  const std::string out = rules_text();
  print_stdout(out);
  return kExitOk;
}

int explain(const std::string& id) {
  const Rule* r = find_rule(id);
  if (!r) {
    print_error(unknown_rule_message(id));
    return kExitUsage;
  }
  const std::string out = rule_explanation_text(*r);
  print_stdout(out);
  return kExitOk;
}

// The document of a machine format (json, sarif) for what was checked, with what stopped the run.
std::string document(const ValidateOptions& opt, const std::vector<FileDiagnostics>& files,
                     const std::vector<std::string>& tool_errors) {
  SarifOptions sarif{PPSCHED_VERSION, opt.docs_url, current_directory(), tool_errors};
  return opt.format == "json" ? validate_json(files, tool_errors) : sarif_report(files, sarif);
}

int validate_files(const ValidateOptions& opt, std::vector<FileDiagnostics>& files);

// Flags CLI11 could not take: the log still comes, with the error. CLI11 stops at the first
// flag it cannot take, which may come before --format, so the format is read off the words.
void parse_failed(int argc, char** argv, const std::string& message) {
  ValidateOptions opt;
  for (int i = 2; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word == "--format" && i + 1 < argc) opt.format = argv[i + 1];
    if (word.rfind("--format=", 0) == 0) opt.format = std::string(word.substr(9));
  }
  if (opt.format != "json" && opt.format != "sarif") return;
  print_stdout(document(opt, {}, {message}));
}

int run_validate(const ValidateOptions& opt) {
  if (opt.list_rules) return list_rules();
  if (!opt.explain.empty()) return explain(opt.explain);
  const bool machine = opt.format == "json" || opt.format == "sarif";
  // A CI step uploads the log whatever the exit code: a run that stops early (a flag that does
  // not hold for one of the files, a stage spec that cannot be read) still writes a whole one,
  // with what it checked and the error that stopped it.
  ErrorLog errors;
  std::vector<FileDiagnostics> files;  // for the formats that write one document at the end
  int exit = kExitUsage;
  try {
    exit = validate_files(opt, files);
  } catch (const UserError& e) {
    print_error(e.what());
  }
  const bool stopped = !errors.messages().empty();
  if (machine) {
    print_stdout(document(opt, files, errors.messages()));
  }
  if (opt.format == "github" && !stopped) append_step_summary(github_step_summary(files));
  return stopped ? static_cast<int>(kExitUsage) : exit;
}

int validate_files(const ValidateOptions& opt, std::vector<FileDiagnostics>& files) {
  if (opt.files.empty()) {
    print_error("give one or more schedule files ('-' = stdin)");
    return kExitUsage;
  }
  ValidateRun run;
  std::vector<std::pair<std::string, RuleLevel>>& levels = run.levels;
  for (const auto& id : opt.disable) levels.emplace_back(id, RuleLevel::Off);
  for (const auto& id : opt.enable) levels.emplace_back(id, find_rule(id) ? find_rule(id)->level : RuleLevel::Error);
  for (const auto& [id, level] : levels)
    if (!find_rule(id)) return explain(id);  // says "unknown rule" with a suggestion
  if (!opt.pytorch_version.empty()) {
    auto v = parse_pytorch_version(opt.pytorch_version);
    if (!v) {
      print_error("--pytorch-version: '" + opt.pytorch_version + "' is not a PyTorch release such as 2.12 or 2.13.0");
      return kExitUsage;
    }
    run.pytorch_filters_non_grad_inputs =
        *v >= std::pair{kPytorchFiltersNonGradInputs[0], kPytorchFiltersNonGradInputs[1]};
    // There the schedule runs: what is left is a portability warning. It goes first, so an
    // explicit --enable or --disable of the rule still wins (the last matching level applies).
    if (run.pytorch_filters_non_grad_inputs)
      levels.insert(levels.begin(), {"input-grad-without-requires-grad", RuleLevel::Warning});
  }
  run.send_mode = *parse_send_mode(opt.send_mode);  // the option's check admitted it
  run.p2p_queues = *parse_p2p_queues(opt.p2p_queues);
  if (!send_mode_has_sizes(run.send_mode, !opt.stage_spec.empty(), "--stage-spec")) return kExitUsage;
  int exit = kExitOk;
  ValidateTally tally;
  for (const std::string& file : opt.files) {
    std::optional<FileDiagnostics> checked = validate_file(opt, run, file);
    if (!checked) return kExitUsage;
    FileDiagnostics& f = *checked;
    if (!f.readable)
      exit = std::max(exit, static_cast<int>(kExitUsage));
    else if (f.errors)
      exit = std::max(exit, static_cast<int>(kExitFindings));
    tally.add(f);
    if (opt.format != "text") {
      files.push_back(std::move(f));
      continue;
    }
    print_stdout(validate_text(f, false, opt.quiet));  // file by file, as each is checked
  }
  if (opt.format == "text" && opt.quiet) {
    print_stdout(tally.text());
  }
  if (opt.format == "github")
    print_annotations(github_annotations(files));  // built with escaped properties; its other lines are safe as made
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
  add_p2p_queues_option(*sub, opt->p2p_queues);
  sub->add_option("--max-bubble", opt->max_bubble, "Fail when the simulated bubble ratio exceeds this (0 to 1)")
      ->check(finite_in(0.0, 1.0));
  sub->add_option("--bubble-definition", opt->bubble_definition,
                  "global (1 - compute / (ranks x makespan), default) or per-stage (Zero Bubble paper)")
      ->check(CLI::IsMember({"global", "per-stage"}))
      ->option_text("global|per-stage");
  sub->add_option("--max-memory", opt->max_memory,
                  "Fail when a rank's simulated peak memory exceeds this: microbatches of activation, or with "
                  "--stage-spec bytes of its stages' weights plus live activations (as simulate --memory-cap); with "
                  "--memory-model pytorch-liveness, PyTorch's activation slots; 8slots or 4microbatches count "
                  "PyTorch's activations at that granularity")
      ->transform(memory_cap_size(*sub, "--max-memory", opt->memory_model))
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
      ->check([](const std::string& url) { return docs_url_problem(url); });
  sub->footer("Example:\n  ppsched validate --schedule ZBVZeroBubble --quiet schedules/*.csv");
  commands.push_back({sub, [opt] { return run_validate(*opt); }, parse_failed});
}

}  // namespace ppsched::cli
