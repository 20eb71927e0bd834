// `ppsched compile`: synthesize a schedule from a family (or read one from a file) and write it
// in the chosen format.
#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>

#include "cli_support.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "parse/json_schedule.hpp"
#include "ir/action_text.hpp"
#include "passes/passes.hpp"
#include "parse/pytorch_csv.hpp"
#include "parse/schedule_reader.hpp"
#include "report/pipeline_grid.hpp"
#include "synth/synth.hpp"

namespace ppsched::cli {

namespace {

enum class OutputFormat { Csv, Json, Text };

struct CompileOptions {
  std::string input;
  std::string schedule;  // a family name; exclusive with input
  std::uint32_t ranks = 0, microbatches = 0, stages_per_rank = 0;
  bool pytorch_compat = false;
  std::string output = "-";
  std::string format = "csv";
  std::string input_format = "auto";
  std::string line_ending = "crlf";
  std::string lower = "none";
  bool lenient = false;
};

// The schedule to write: synthesized, or read (problems printed); nullopt on failure.
std::optional<Schedule> source_schedule(const CompileOptions& opt) {
  if (!opt.schedule.empty()) {
    SynthParams p;
    p.ranks = opt.ranks;
    p.microbatches = opt.microbatches;
    p.stages_per_rank = opt.stages_per_rank;
    p.pytorch_compat = opt.pytorch_compat;
    try {
      Schedule s = synthesize(opt.schedule, p);
      if (opt.pytorch_compat && find_family(opt.schedule)->name == "1F1B")
        print_warning("--pytorch-compat: this is PyTorch's Schedule1F1B.pipeline_order, which is "
                      "invalid: the last rank never runs F0 and runs one microbatch too many, so "
                      "PyTorch's own _validate_schedule rejects it. Without the flag ppsched writes "
                      "the order PyTorch's 1F1B runtime executes.");
      return s;
    } catch (const SynthError& e) {
      print_error(e.what());
      return std::nullopt;
    }
  }
  DiagnosticSink sink;
  ScheduleReadOptions read_opt;
  read_opt.format = *schedule_format_from_name(opt.input_format);
  read_opt.lenient = opt.lenient;
  auto parsed = read_schedule(opt.input, read_opt, sink);
  print_diagnostics(sink);
  if (!parsed) return std::nullopt;
  return std::move(parsed->schedule);
}

// Applies the lowering recipe; prints PyTorch's verdict and returns nullopt when it fails.
std::optional<Schedule> lower(const Schedule& s, const std::string& recipe) {
  try {
    if (recipe == "send-recv") return lower_send_recv(s);
    if (recipe == "runtime") {
      // PyTorch's single-stage orders (GPipe, 1F1B --pytorch-compat) already end each rank with
      // REDUCE_GRAD; the runtime recipe places it again, at the same steps.
      return lower_runtime(strip_kind(s, ActionKind::ReduceGrad));
    }
    return s;
  } catch (const PassError& e) {
    std::string msg = std::string("cannot lower the schedule (--lower ") + recipe + "): " + e.what();
    if (e.grid_step())
      msg += "\n\nFull pipeline schedule:\n" + format_pipeline_grid(s, *e.grid_step());
    for (const PassError::Stuck& stuck : e.stuck())
      msg += "\nnote: rank " + std::to_string(stuck.rank) + " cannot run its step " +
             std::to_string(stuck.step) + " (" +
             action_text(s.ranks[stuck.rank].actions[stuck.step], s.sub_actions) +
             "): what it waits for never comes";
    print_error(msg);
    return std::nullopt;
  }
}

int run_compile(const CompileOptions& opt) {
  if (opt.input.empty() == opt.schedule.empty()) {
    print_error("give either a schedule FILE or --schedule NAME (see ppsched list)");
    return kExitUsage;
  }
  if (!opt.schedule.empty() && (opt.ranks == 0 || opt.microbatches == 0)) {
    print_error("--schedule needs --ranks and --microbatches");
    return kExitUsage;
  }
  std::optional<Schedule> source = source_schedule(opt);
  if (!source) return kExitUsage;
  std::optional<Schedule> lowered = lower(*source, opt.lower);
  if (!lowered) return kExitUsage;
  const Schedule& s = *lowered;
  CsvWriteOptions csv;
  csv.line_ending = opt.line_ending == "lf" ? LineEnding::Lf : LineEnding::Crlf;
  write_output(opt.output, [&](ByteSink& out) {
    if (opt.format == "json")
      write_json_schedule(s, out);
    else if (opt.format == "text")
      out.write(format_pipeline_grid(s));
    else
      write_pytorch_csv(s, out, csv);
  });
  return kExitOk;
}

}  // namespace

void add_compile_command(CLI::App& app, std::vector<Command>& commands) {
  auto opt = std::make_shared<CompileOptions>();
  CLI::App* sub = app.add_subcommand(
      "compile", "Synthesize a schedule (or read one) and write it as CSV, JSON or a text grid");
  auto* file = sub->add_option("FILE", opt->input, "Schedule to read: PyTorch CSV or ppsched JSON ('-' = stdin)");
  auto* family = sub->add_option("--schedule", opt->schedule, "Family to synthesize (see `ppsched list`)");
  file->excludes(family);
  sub->add_option("--ranks", opt->ranks, "Pipeline ranks (with --schedule)")->check(CLI::Range(1u, 65535u));
  sub->add_option("--microbatches", opt->microbatches, "Microbatches per iteration (with --schedule)")
      ->check(CLI::Range(1u, 4294967294u));
  sub->add_option("--stages-per-rank", opt->stages_per_rank, "Stages per rank (default: the family's)")
      ->check(CLI::Range(1u, 65535u));
  sub->add_flag("--pytorch-compat", opt->pytorch_compat,
                "Reproduce PyTorch's output where it is wrong (1F1B's invalid pipeline_order)");
  sub->add_option("-o,--output", opt->output, "Where to write ('-' = stdout, the default)");
  sub->add_option("--format", opt->format, "Output format: csv (PyTorch's), json (ppsched's), text (step grid)")
      ->check(CLI::IsMember({"csv", "json", "text"}))
      ->option_text("csv|json|text");
  sub->add_option("--input-format", opt->input_format, "Input format (default: auto-detect)")
      ->check(CLI::IsMember({"auto", "csv", "json"}))
      ->option_text("auto|csv|json");
  sub->add_option("--line-ending", opt->line_ending, "CSV line ending (PyTorch writes crlf)")
      ->check(CLI::IsMember({"crlf", "lf"}))
      ->option_text("crlf|lf");
  sub->add_option("--lower", opt->lower,
                  "Lowering: none (compute only, what torchtitan loads), send-recv (PyTorch's "
                  "_add_send_recv), runtime (validate, unshard/reshard, reduce-grad, send/recv)")
      ->check(CLI::IsMember({"none", "send-recv", "runtime"}))
      ->option_text("none|send-recv|runtime");
  sub->add_flag("--lenient", opt->lenient,
                "Accept every cell PyTorch's parser accepts (e.g. '0F0x', '00F1'), with a warning");
  commands.push_back({sub, [opt] { return run_compile(*opt); }});
}

}  // namespace ppsched::cli
