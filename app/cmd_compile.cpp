// `ppsched compile`: read a schedule and write it in the chosen format.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

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
  std::string format = "csv";
  std::string input_format = "auto";
  std::string line_ending = "crlf";
  bool lenient = false;
};

int run_compile(const CompileOptions& opt) {
  DiagnosticSink sink;
  ScheduleReadOptions read_opt;
  read_opt.format = *schedule_format_from_name(opt.input_format);
  read_opt.lenient = opt.lenient;
  auto parsed = read_schedule(opt.input, read_opt, sink);
  print_diagnostics(sink);
  if (!parsed) return kExitUsage;
  const Schedule& s = parsed->schedule;
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
  CLI::App* sub = app.add_subcommand("compile", "Read a schedule and write it as CSV, JSON or a text grid");
  sub->add_option("FILE", opt->input, "Schedule to read: PyTorch CSV or ppsched JSON ('-' = stdin)")
      ->required();
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
  sub->add_flag("--lenient", opt->lenient,
                "Accept every cell PyTorch's parser accepts (e.g. '0F0x', '00F1'), with a warning");
  commands.push_back({sub, [opt] { return run_compile(*opt); }});
}

}  // namespace ppsched::cli
