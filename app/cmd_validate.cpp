// `ppsched validate`: lint schedules for what a GPU run would hit, before a job is queued.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "check/check.hpp"
#include "cli_support.hpp"
#include "commands.hpp"
#include "diag/render.hpp"
#include "diag/suggest.hpp"
#include "exit_codes.hpp"
#include "io/input_file.hpp"
#include "model/costs.hpp"
#include "parse/cost_table.hpp"
#include "parse/schedule_reader.hpp"
#include "parse/stage_spec_json.hpp"
#include "report/validate_formats.hpp"
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
  std::vector<std::string> enable, disable;
  bool werror = false;
  bool list_rules = false;
  std::string explain;
  std::string format = "text";
  std::string stage_spec;
  double max_bubble = -1, max_memory = -1;
  std::string bubble_definition = "global";
  std::string costs;
  std::string pytorch_version;
};

std::string rule_level_name(RuleLevel l) {
  switch (l) {
    case RuleLevel::Off: return "off";
    case RuleLevel::Note: return "note";
    case RuleLevel::Warning: return "warning";
    case RuleLevel::Error: return "error";
  }
  return "error";
}

int list_rules() {
  std::string out;
  for (const Rule& r : rules()) out += fmt::format("{:<26} {:<8} {}\n", r.id, rule_level_name(r.level), r.summary);
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
  std::string out = fmt::format("{} ({} by default)\n  {}\n  how to fix: {}\n  docs/rules.md#{}\n", r->id,
                                rule_level_name(r->level), r->summary, r->help, r->id);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

// Fills in each diagnostic's source line and caret from the file's text.
std::vector<Diagnostic> with_snippets(const std::vector<Diagnostic>& in, const std::string& path) {
  std::vector<Diagnostic> out = in;
  bool located = false;
  for (const Diagnostic& d : in) located |= d.loc.line != 0 && d.snippet.text.empty();
  if (!located) return out;  // a clean file is not read twice
  std::string text;
  try {
    text = read_whole_input(path, std::size_t{1} << 30);
  } catch (const IoError&) {
    return out;
  }
  std::vector<std::size_t> starts{0};
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') starts.push_back(i + 1);
  auto line_text = [&](std::uint32_t line) -> std::string_view {
    if (line == 0 || line > starts.size()) return {};
    std::size_t b = starts[line - 1];
    std::size_t e = line < starts.size() ? starts[line] - 1 : text.size();
    if (e > b && text[e - 1] == '\r') --e;
    return std::string_view(text).substr(b, e - b);
  };
  auto fill = [&](const SourceLoc& loc, Snippet& snip) {
    if (!loc.line || !loc.column) return;
    std::string_view l = line_text(loc.line);
    std::size_t col0 = loc.column - 1;
    std::size_t end = l.find(',', col0);
    snip = make_snippet(l, col0, (end == std::string_view::npos ? l.size() : end) - col0);
  };
  for (Diagnostic& d : out) {
    fill(d.loc, d.snippet);
    for (Note& n : d.notes) fill(n.loc, n.snippet);
  }
  return out;
}

std::optional<CheckContext> make_context(const ValidateOptions& opt, const ParsedSchedule& p, const std::string& name,
                                         std::vector<std::string>& notes, std::vector<std::string>& pins) {
  CheckContext ctx;
  const Schedule& s = p.schedule;
  ctx.schedule = &s;
  ctx.source = p.source.rank_line.empty() ? nullptr : &p.source;
  ctx.file = name;
  ctx.ranks = opt.ranks ? opt.ranks : static_cast<std::uint32_t>(s.rank_count());
  if (!opt.ranks) {
    notes.push_back(fmt::format("{} ranks (the row count)", ctx.ranks));
    pins.emplace_back("--ranks");
  }
  std::uint32_t spr = opt.stages_per_rank;
  PlacementStyle style = PlacementStyle::Unspecified;
  if (!opt.schedule.empty()) {
    const Family* f = find_family(opt.schedule);
    if (!f) {
      print_error("unknown schedule '" + opt.schedule + "' (see ppsched list)");
      return std::nullopt;
    }
    if (!spr) spr = f->default_stages_per_rank;
    style = f->placement;
  }
  if (opt.placement == "loop") style = PlacementStyle::Loop;
  if (opt.placement == "v") style = PlacementStyle::V;
  if (spr) {
    ctx.stages = spr * ctx.ranks;
  } else if (s.num_stages) {
    ctx.stages = s.num_stages;
  } else {
    ctx.stages = infer_stage_count(s);
    notes.push_back(fmt::format("{} stages (the highest stage used)", ctx.stages));
    pins.emplace_back("--stages-per-rank");
  }
  if (opt.microbatches) {
    ctx.microbatches = opt.microbatches;
  } else if (s.num_microbatches) {
    ctx.microbatches = s.num_microbatches;
  } else {
    ctx.microbatches = infer_microbatch_count(s);
    notes.push_back(fmt::format("{} microbatches (the highest used)", ctx.microbatches));
    pins.emplace_back("--microbatches");
  }
  if (!opt.placement.empty() && opt.placement != "loop" && opt.placement != "v") {
    std::stringstream list(opt.placement);
    std::string item;
    while (std::getline(list, item, ',')) {
      try {
        ctx.stage_to_rank.push_back(static_cast<std::uint32_t>(std::stoul(item)));
      } catch (const std::exception&) {
        print_error("--placement: '" + item + "' is not a rank (give loop, v, or a list like 0,1,1,0)");
        return std::nullopt;
      }
    }
    ctx.placement_inferred = false;
  } else if (style == PlacementStyle::Loop) {
    ctx.stage_to_rank = Placement::loop(ctx.ranks, ctx.stages).stage_to_rank;
    ctx.placement_inferred = false;
  } else if (style == PlacementStyle::V) {
    auto v = Placement::v(ctx.ranks, ctx.stages);
    if (!v) {
      print_error(fmt::format("a v placement needs stages ({}) to be a multiple of ranks ({})", ctx.stages, ctx.ranks));
      return std::nullopt;
    }
    ctx.stage_to_rank = v->stage_to_rank;
    ctx.placement_inferred = false;
  } else if (s.placement.style != PlacementStyle::Unspecified) {
    ctx.stage_to_rank = s.placement.stage_to_rank;
    ctx.placement_inferred = false;
  } else {
    ctx.stage_to_rank = infer_placement(s).stage_to_rank;
    notes.push_back("each stage on the first rank that runs it (PyTorch's inference)");
    pins.emplace_back("--placement");
    pins.emplace_back("--schedule");
  }
  if (ctx.stage_to_rank.size() < ctx.stages) ctx.stage_to_rank.resize(ctx.stages, 0);
  for (const auto& r : s.ranks)
    for (const Action& a : r.actions) ctx.has_comms |= is_send_recv(a.kind);
  ctx.expect_compute_only = opt.expect == "compute-only";
  return ctx;
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
    filters_non_grad_inputs =
        *v >= std::pair{kPytorchFiltersNonGradInputs[0], kPytorchFiltersNonGradInputs[1]};
    // There the schedule runs: what is left is a portability warning. It goes first, so an
    // explicit --enable or --disable of the rule still wins (the last matching level applies).
    if (filters_non_grad_inputs)
      levels.insert(levels.begin(), {"input-grad-without-requires-grad", RuleLevel::Warning});
  }
  bool color = false;
  int exit = kExitOk;
  nlohmann::ordered_json json_files = nlohmann::ordered_json::array();
  std::vector<FileDiagnostics> all;
  for (const std::string& file : opt.files) {
    DiagnosticSink sink;
    ScheduleReadOptions read_opt;
    read_opt.format = *schedule_format_from_name(opt.input_format);
    read_opt.lenient = opt.lenient;
    auto parsed = read_schedule(file, read_opt, sink);
    std::vector<std::string> notes;
    std::vector<std::string> pins;  // the flags that would set what the notes say was inferred
    std::optional<CheckContext> ctx;
    if (parsed) {
      ctx = make_context(opt, *parsed, display_name(file), notes, pins);
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
      ctx->max_bubble = opt.max_bubble;
      ctx->bubble_per_stage = opt.bubble_definition == "per-stage";
      ctx->max_memory = opt.max_memory;
      std::optional<CostModel> costs;
      if (!opt.costs.empty()) {
        costs = CostModel::for_pipeline(ctx->ranks, ctx->stages);
        if (!read_cost_file(opt.costs, *costs, sink)) {
          print_diagnostics(sink);
          return kExitUsage;
        }
        ctx->costs = &*costs;
      }
      run_checks(*ctx, sink, levels);
    }
    std::vector<Diagnostic> diags = file == "-" ? sink.diagnostics() : with_snippets(sink.diagnostics(), file);
    std::size_t errors = 0, warnings = 0;
    for (const Diagnostic& d : diags) {
      bool as_error = d.severity == Severity::Error || (opt.werror && d.severity == Severity::Warning);
      errors += as_error;
      warnings += !as_error && d.severity == Severity::Warning;
    }
    if (!parsed) exit = std::max(exit, static_cast<int>(kExitUsage));
    else if (errors) exit = std::max(exit, static_cast<int>(kExitFindings));
    if (opt.format == "sarif" || opt.format == "github") {
      all.push_back({display_name(file), diags});
      continue;
    }
    if (opt.format == "json") {
      nlohmann::ordered_json f;
      f["file"] = display_name(file);
      f["readable"] = parsed.has_value();
      f["errors"] = errors;
      f["warnings"] = warnings;
      f["notes"] = notes;
      auto& list = f["diagnostics"] = nlohmann::ordered_json::array();
      for (const Diagnostic& d : diags) {
        nlohmann::ordered_json j{{"rule", d.rule},
                                 {"severity", severity_name(d.severity)},
                                 {"message", d.message},
                                 {"file", d.loc.file},
                                 {"line", d.loc.line},
                                 {"column", d.loc.column}};
        if (!d.loc.path.empty()) j["path"] = d.loc.path;
        auto& ns = j["notes"] = nlohmann::ordered_json::array();
        for (const Note& n : d.notes)
          ns.push_back({{"message", n.message}, {"line", n.loc.line}, {"column", n.loc.column}});
        list.push_back(std::move(j));
      }
      json_files.push_back(std::move(f));
      continue;
    }
    std::string out;
    for (const Diagnostic& d : diags) out += render_text(d, RenderOptions{color});
    if (!notes.empty()) {
      std::string joined, flags;
      for (const std::string& n : notes) joined += (joined.empty() ? "" : "; ") + n;
      for (std::size_t i = 0; i < pins.size(); ++i)
        flags += (i == 0 ? "" : i + 1 == pins.size() ? " or " : ", ") + pins[i];
      // Only the flags that set what was inferred: --schedule given alone still leaves the
      // ranks and microbatches to the file.
      out += fmt::format("{}: note: inferred {} (pass {} to check against {})\n", display_name(file), joined, flags,
                         notes.size() == 1 ? "it" : "them");
    }
    out += fmt::format("{}: {}\n", display_name(file),
                       !parsed ? "unreadable"
                               : errors || warnings ? fmt::format("{} error(s), {} warning(s)", errors, warnings)
                                                    : std::string("ok"));
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  if (opt.format == "sarif" || opt.format == "github") {
    std::string text = opt.format == "sarif" ? sarif_report(all, PPSCHED_VERSION) : github_annotations(all);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  if (opt.format == "json") {
    nlohmann::ordered_json doc{{"schema_version", 1}, {"tool", "ppsched validate"}, {"files", json_files}};
    std::string text = doc.dump(2) + "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
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
  sub->add_option("--schedule", opt->schedule, "Take placement and stages per rank from this family, as torchtitan does");
  sub->add_option("--stage-spec", opt->stage_spec,
                  "Stage spec JSON: each stage's inputs and whether they require grad (docs/formats.md)");
  sub->add_option("--pytorch-version", opt->pytorch_version,
                  "The PyTorch release the schedule runs on (e.g. 2.12): 2.13 and later skip inputs that do not "
                  "require grad in an I, so input-grad-without-requires-grad becomes a warning (default: older)");
  sub->add_option("--max-bubble", opt->max_bubble, "Fail when the simulated bubble ratio exceeds this (0 to 1)")
      ->check(finite_in(0.0, 1.0));
  sub->add_option("--bubble-definition", opt->bubble_definition,
                  "global (1 - compute / (ranks x makespan), default) or per-stage (Zero Bubble paper)")
      ->check(CLI::IsMember({"global", "per-stage"}))
      ->option_text("global|per-stage");
  sub->add_option("--max-memory", opt->max_memory,
                  "Fail when a rank's simulated peak memory exceeds this: microbatches of activation, or with "
                  "--stage-spec bytes of its stages' weights plus live activations (as simulate --memory-cap)")
      ->check(finite_positive());
  sub->add_option("--costs", opt->costs, "Cost table for the thresholds (default: unit costs)");
  sub->add_option("--input-format", opt->input_format, "Input format (default: auto-detect)")
      ->check(CLI::IsMember({"auto", "csv", "json"}))
      ->option_text("auto|csv|json");
  sub->add_flag("--lenient", opt->lenient, "Accept every cell PyTorch's parser accepts, with a warning");
  sub->add_option("--enable", opt->enable, "Enable a rule (repeatable)");
  sub->add_option("--disable", opt->disable, "Disable a rule (repeatable)");
  sub->add_flag("--werror", opt->werror, "Count warnings as errors");
  sub->add_flag("--list-rules", opt->list_rules, "List the rules and exit");
  sub->add_option("--explain", opt->explain, "Explain one rule and exit");
  sub->add_option("--format", opt->format,
                  "text (default), json, sarif (SARIF 2.1.0 for code scanning) or github (workflow annotations)")
      ->check(CLI::IsMember({"text", "json", "sarif", "github"}))
      ->option_text("text|json|sarif|github");
  commands.push_back({sub, [opt] { return run_validate(*opt); }});
}

}  // namespace ppsched::cli
