// `ppsched compile`: synthesize a schedule from a family (or read one from a file), lower it if
// asked, and write it in the chosen format.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "cli_support.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "parse/json_schedule.hpp"
#include "parse/pytorch_csv.hpp"
#include "report/pipeline_grid.hpp"
#include "schedule_source.hpp"
#include "sim_inputs.hpp"
#include "synth/synth.hpp"

namespace ppsched::cli {

namespace {

struct CompileOptions {
  SourceOptions source;
  SimInputOptions inputs;  // the costs --schedule auto optimizes for
  std::string output = "-";
  std::string format = "csv";
  std::string line_ending = "crlf";
};

int run_compile(const CompileOptions& opt) {
  if (opt.inputs.optimizer != "sync" && !is_auto_schedule(opt.source.schedule)) {
    print_error("--optimizer chooses what --schedule auto minimises; compile writes any other schedule as it is");
    return kExitUsage;
  }
  if ((opt.inputs.runtime != "pytorch" || !opt.inputs.runtime_params.empty()) &&
      !is_auto_schedule(opt.source.schedule)) {
    print_error(
        "--runtime and --runtime-params choose what --schedule auto is ranked under; compile writes any other "
        "schedule as it is");
    return kExitUsage;
  }
  std::optional<PreparedSchedule> loaded = load_schedule(opt.source);
  if (!loaded) return kExitUsage;
  const Schedule& s = loaded->as_run();
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
  CLI::App* sub =
      app.add_subcommand("compile", "Synthesize a schedule (or read one) and write it as CSV, JSON or a text grid");
  add_source_options(*sub, opt->source);
  opt->source.sim_inputs = &opt->inputs;
  sub->add_option("--memory-cap", opt->source.memory_cap,
                  "With --schedule auto: peak activation memory per rank (microbatches, or bytes with a stage spec)")
      ->check(finite_positive());
  add_sim_input_options(*sub, opt->inputs);
  add_runtime_option(*sub, opt->inputs);  // with --optimizer: what --schedule auto is ranked under
  sub->add_option("-o,--output", opt->output, "Where to write ('-' = stdout, the default)");
  sub->add_option("--format", opt->format, "Output format: csv (PyTorch's), json (ppsched's), text (step grid)")
      ->check(CLI::IsMember({"csv", "json", "text"}))
      ->option_text("csv|json|text");
  sub->add_option("--line-ending", opt->line_ending, "CSV line ending (PyTorch writes crlf)")
      ->check(CLI::IsMember({"crlf", "lf"}))
      ->option_text("crlf|lf");
  sub->footer("Example:\n  ppsched compile --schedule ZBVZeroBubble --ranks 4 --microbatches 8 -o zbv.csv");
  commands.push_back({sub, [opt] { return run_compile(*opt); }});
}

}  // namespace ppsched::cli
