#include "run_steps.hpp"

#include <atomic>
#include <csignal>
#include <sstream>

#include "check/check.hpp"
#include "cli_support.hpp"
#include "exit_codes.hpp"
#include "io/output_file.hpp"
#include "parse/cost_table.hpp"
#include "parse/topology_json.hpp"
#include "report/run_report.hpp"
#include "run/fake_device.hpp"

namespace ppsched::cli {

namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};
extern "C" void on_interrupt(int sig) {
  g_signal.store(sig);
  g_interrupted.store(true);
}

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// The validator's verdict on the schedule as given (a file before lowering, with its line and
// column positions); a schedule with errors is refused before any device work.
bool passes_validation(const PreparedSchedule& prepared, const std::string& name,
                       const std::vector<std::uint32_t>& placement, const TimedOptions& sim) {
  const Schedule& s = prepared.given;
  CheckContext ctx = context_for(s, placement, name, &prepared.source);
  ctx.placement_inferred = s.placement.style == PlacementStyle::Unspecified;
  if (!sim.comm.stages.empty()) ctx.stage_spec = &sim.comm.stages;
  DiagnosticSink sink;
  run_checks(ctx, sink);
  if (!sink.has_errors()) return true;
  print_diagnostics(sink);
  print_error("refusing to run '" + name + "': it fails validation (ppsched validate shows the same)");
  return false;
}

// The GEMM workload without a given cost table: does the simulator, given the run's own measured
// per-action times, predict the measured iteration?
bool predicts_from_measurement(const RunOptions& opt) {
  return opt.workload == "gemm" && opt.inputs.cost.empty() && opt.inputs.costs.empty();
}

}  // namespace

int load_requests(RunOptions& opt, std::vector<run::RunRequest>& requests) {
  opt.shape.element_bytes = opt.dtype == "fp32" ? 4 : 2;
  const std::vector<std::string> names = split_names(opt.source.schedule);
  if (names.size() > 1 && (!opt.trace.empty() || !opt.cost_out.empty())) {
    print_error("--trace and --cost-out describe one schedule; give one --schedule with them");
    return kExitUsage;
  }
  std::vector<std::string> sources = names.empty() ? std::vector<std::string>{""} : names;
  for (const std::string& name : sources) {
    SourceOptions src = opt.source;
    src.schedule = name;
    src.sim_inputs = &opt.inputs;
    std::optional<PreparedSchedule> prepared = load_schedule(src);
    if (!prepared) return kExitUsage;
    const Schedule& s = prepared->as_run();
    run::RunRequest req;
    req.name = name.empty() ? opt.source.input : name;
    req.stage_to_rank = stage_to_rank_in_use(s);
    auto inputs = load_sim_inputs(opt.inputs, static_cast<std::uint32_t>(s.rank_count()), req.stage_to_rank, &s);
    if (!inputs) return kExitUsage;
    if (!passes_validation(*prepared, req.name, req.stage_to_rank, inputs->sim)) return kExitFindings;
    req.sim = inputs->sim;
    req.plan.workload = opt.workload == "gemm" ? run::Workload::Gemm : run::Workload::Synthetic;
    req.plan.shape = opt.shape;
    req.plan.blocking_comms = opt.inputs.blocking_comms;
    req.plan.costs = inputs->sim.costs;
    req.plan.comm = inputs->sim.comm;
    req.plan.activation_bytes = opt.activation_bytes;
    req.predict_from_measurement = predicts_from_measurement(opt);
    req.schedule = std::move(*prepared).take_as_run();
    requests.push_back(std::move(req));
  }
  return kExitOk;
}

std::unique_ptr<run::DeviceRuntime> make_device_runtime(const RunOptions& opt) {
  if (opt.backend == "fake")
    return std::make_unique<run::FakeRuntime>(run::FakeOptions{opt.fake_devices, opt.fake_jitter, 1});
  return run::make_cuda_runtime();
}

void stop_at_iteration_boundary_on_interrupt(run::MeasureOptions& measure) {
  measure.interrupted = &g_interrupted;
  handle_signal_unless_ignored(SIGINT, on_interrupt);
  handle_signal_unless_ignored(SIGTERM, on_interrupt);
}

int interrupt_signal() { return g_signal.load(); }

void adopt_interrupt_signal(int sig) {
  g_signal.store(sig);
  g_interrupted.store(true);
}

int interrupted_exit_code() { return g_signal.load() == SIGTERM ? 128 + SIGTERM : kExitInterrupted; }

std::string no_gpu_text(const run::Discovery& discovery) {
  return no_gpu_message(discovery) + " (--backend fake runs the same engine without a GPU)";
}

int write_run_outputs(const RunOptions& opt, const run::BenchmarkReport& rep) {
  if (!rep.results.empty()) {
    const run::RunResult& first = rep.results.front();
    if (!opt.trace.empty())
      write_output(opt.trace, [&](ByteSink& out) { write_measured_trace(first, rep.discovery.backend, out); });
    if (!opt.cost_out.empty())
      write_output(opt.cost_out,
                   [&](ByteSink& out) { write_cost_table(run::measured_costs(first.cost_kinds()), out); });
  }
  if (!opt.topology_out.empty() && rep.measured_topology)
    write_output(opt.topology_out, [&](ByteSink& out) { write_topology(*rep.measured_topology, out); });
  const RunReportConfig config{.version = PPSCHED_VERSION,
                               .backend = opt.backend,
                               .workload = opt.workload,
                               .dtype = opt.dtype,
                               .shape = opt.shape,
                               .warmup = opt.measure.warmup,
                               .stop = opt.measure.rule,
                               .cost = cost_description(opt.inputs),
                               .costs_file = opt.inputs.costs,
                               .sim_from_measured_costs = predicts_from_measurement(opt)};
  write_output(opt.output, [&](ByteSink& out) {
    out.write(opt.format == "json" ? run_report_json(config, rep) : run_report_text(config, rep));
  });
  if (rep.interrupted) return interrupted_exit_code();
  if (const std::string problem = ratio_bounds_problem(rep, opt.min_ratio, opt.max_ratio); !problem.empty()) {
    print_error(problem);
    return kExitFindings;
  }
  return kExitOk;
}

}  // namespace ppsched::cli
