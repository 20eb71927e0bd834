// `ppsched trace`: what a profiled pipeline run did. Reads one PyTorch profiler trace per rank
// (parse/kineto_trace.hpp), aligns and measures them (trace/trace_analysis.hpp), simulates the
// order as run with the measured costs (trace/trace_compare.hpp), and writes the report and what
// the flags ask for: the order as PyTorch's CSV, the cost table, a merged Perfetto trace.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <memory>

#include "cli_support.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "ir/user_error.hpp"
#include "parse/kineto_trace.hpp"
#include "parse/pytorch_csv.hpp"
#include "report/trace_report.hpp"
#include "sim_inputs.hpp"
#include "trace/measured_queues.hpp"

namespace ppsched::cli {

namespace {

struct TraceOptions {
  std::vector<std::string> files;
  SimInputOptions inputs;  // --runtime, --optimizer, --runtime-params
  std::string format = "text", output = "-";
  std::string schedule_out, costs_out, trace_out, html;
  std::string p2p_queues = "measured";
};

// The communicator queues to simulate with, and why: as the trace's NCCL streams show (the
// default), or as the flag says.
std::pair<P2pQueues, std::string> queues_for(const TraceAnalysis& measured, const std::string& flag) {
  const MeasuredQueues seen = measured_p2p_queues(measured);
  if (flag != "measured")
    return {*parse_p2p_queues(flag), fmt::format("as --p2p-queues says (the trace: {})", seen.evidence)};
  if (seen.queues) return {*seen.queues, "as measured: " + seen.evidence};
  return {P2pQueues::PerRank, "the default, as the trace cannot tell: " + seen.evidence};
}

int run_trace(const TraceOptions& opt) {
  const std::optional<RuntimeModel> runtime = load_runtime_model(opt.inputs);
  if (!runtime) return kExitUsage;
  std::vector<MeasuredRank> ranks;
  for (const std::string& file : opt.files) {
    set_doing("reading " + file);
    DiagnosticSink sink;
    std::optional<MeasuredRank> r = read_kineto_trace(file, sink);
    print_diagnostics(sink);
    if (!r) return kExitUsage;
    ranks.push_back(std::move(*r));
  }
  TraceAnalysis measured;
  TraceComparison simulated;
  try {
    set_doing("aligning and measuring the ranks");
    measured = analyze_traces(std::move(ranks));
    set_doing("simulating the order as run");
    const auto [queues, basis] = queues_for(measured, opt.p2p_queues);
    simulated = compare_with_simulator(measured, *runtime, queues);
    simulated.p2p_queues_basis = basis;
  } catch (const UserError& e) {
    print_error(e.what());
    return kExitUsage;
  }
  std::vector<std::pair<std::string, std::function<void(ByteSink&)>>> files;
  if (!opt.schedule_out.empty())
    files.push_back({opt.schedule_out, [&](ByteSink& out) { write_pytorch_csv(measured.executed, out); }});
  if (!opt.costs_out.empty())
    files.push_back({opt.costs_out, [&](ByteSink& out) { out.write(measured_costs_csv(measured)); }});
  if (!opt.trace_out.empty())
    files.push_back({opt.trace_out, [&](ByteSink& out) { out.write(merged_trace_json(measured)); }});
  if (!opt.html.empty())
    files.push_back(
        {opt.html, [&](ByteSink& out) { write_trace_html(measured, simulated, runtime_name(runtime->runtime), out); }});
  if (!files.empty()) write_outputs_together(files);
  const std::string_view name = runtime_name(runtime->runtime);
  write_output(opt.output, [&](ByteSink& out) {
    out.write(opt.format == "json" ? trace_json(measured, simulated, name) : trace_text(measured, simulated, name));
  });
  return kExitOk;
}

}  // namespace

void add_trace_command(CLI::App& app, std::vector<Command>& commands) {
  auto opt = std::make_shared<TraceOptions>();
  CLI::App* sub = app.add_subcommand(
      "trace", "Read PyTorch profiler traces of a pipeline run: its order, costs and time, beside the simulator's");
  sub->add_option("files", opt->files, "One trace per rank (.json or .json.gz, any order)")->required();
  add_runtime_option(*sub, opt->inputs);
  add_p2p_queues_option(*sub, opt->p2p_queues, /*measured=*/true);
  sub->add_option("--format", opt->format, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->option_text("text|json");
  sub->add_option("-o,--output", opt->output, "Where to write the report ('-' = stdout)");
  sub->add_option("--schedule-out", opt->schedule_out,
                  "Write each rank's executed order (the first profiled step) as PyTorch's CSV");
  sub->add_option("--costs-out", opt->costs_out,
                  "Write the measured costs as the cost table simulate --costs and tune --costs read");
  sub->add_option("--trace-out", opt->trace_out,
                  "Write one merged Chrome/Perfetto trace: a process per rank on rank 0's clock, SEND/RECV arrows");
  sub->add_option("--html", opt->html,
                  "Write the measured run's first step as one page (its Gantt chart and idle by cause), with the "
                  "simulated run's figures beside it");
  sub->footer("Example:\n  ppsched trace rank0_trace.json rank1_trace.json.gz --costs-out measured.csv");
  commands.push_back({sub, [opt] { return run_trace(*opt); }});
}

}  // namespace ppsched::cli
