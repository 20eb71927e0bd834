// `ppsched compile`: read a schedule and write it in the chosen format.
#include <CLI/CLI.hpp>
#include <memory>

#include "cli_support.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "parse/json_schedule.hpp"
#include "parse/pytorch_csv.hpp"
#include "parse/schedule_reader.hpp"
#include "report/pipeline_grid.hpp"

namespace ppsched::cli {

namespace {

enum class OutputFormat { Csv, Json, Text };

struct CompileOptions {
  std::string input;
  std::string output = "-";
  OutputFormat format = OutputFormat::Csv;
  ScheduleFormat input_format = ScheduleFormat::Auto;
  LineEnding line_ending = LineEnding::Crlf;
  bool lenient = false;
};

int run_compile(const CompileOptions& opt) {
  DiagnosticSink sink;
  auto parsed = read_schedule(opt.input, {opt.input_format, opt.lenient}, sink);
  print_diagnostics(sink);
  if (!parsed) return kExitUsage;
  const Schedule& s = parsed->schedule;
  write_output(opt.output, [&](ByteSink& out) {
    switch (opt.format) {
      case OutputFormat::Csv: write_pytorch_csv(s, out, {opt.line_ending}); break;
      case OutputFormat::Json: write_json_schedule(s, out); break;
      case OutputFormat::Text: out.write(format_pipeline_grid(s)); break;
    }
  });
  return kExitOk;
}

}  // namespace

void add_compile_command(CLI::App& app, std::vector<Command>& commands) {
  auto opt = std::make_shared<CompileOptions>();
  CLI::App* sub = app.add_subcommand("compile", "Read a schedule and write it as CSV, JSON or a text grid");
  sub->add_option("FILE", opt->input, "Schedule to read: PyTorch CSV or ppsched JSON ('-' = stdin)")
      ->required();
  sub->add_option("-o,--output", opt->output, "Where to write ('-' = stdout, the default)");
  sub->add_option("--format", opt->format, "Output format: csv (PyTorch's), json (ppsched's), text (step grid)")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, OutputFormat>{{"csv", OutputFormat::Csv},
                                              {"json", OutputFormat::Json},
                                              {"text", OutputFormat::Text}},
          CLI::ignore_case))
      ->option_text("csv|json|text");
  sub->add_option("--input-format", opt->input_format, "Input format (default: auto-detect)")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, ScheduleFormat>{{"auto", ScheduleFormat::Auto},
                                                {"csv", ScheduleFormat::Csv},
                                                {"json", ScheduleFormat::Json}},
          CLI::ignore_case))
      ->option_text("auto|csv|json");
  sub->add_option("--line-ending", opt->line_ending, "CSV line ending (PyTorch writes crlf)")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, LineEnding>{{"crlf", LineEnding::Crlf}, {"lf", LineEnding::Lf}},
          CLI::ignore_case))
      ->option_text("crlf|lf");
  sub->add_flag("--lenient", opt->lenient,
                "Accept every cell PyTorch's parser accepts (e.g. '0F0x', '00F1'), with a warning");
  commands.push_back({sub, [opt] { return run_compile(*opt); }});
}

}  // namespace ppsched::cli
