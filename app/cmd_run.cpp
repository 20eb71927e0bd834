// `ppsched run`: execute schedules on this node's GPUs, time them the nvbench way, and compare the
// measured iteration with the simulated one. The work is in lib/run and the faces in
// report/run_report.hpp; this file binds flags, checks each schedule, runs them (run_benchmarks
// discovers the devices once) and writes the report, the trace and the cost table.
#include <fmt/format.h>

#include <unistd.h>
#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>

#include "check/check.hpp"
#include "cli_support.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "io/output_file.hpp"
#include "parse/cost_table.hpp"
#include "parse/topology_json.hpp"
#include "report/run_report.hpp"
#include "run/benchmark.hpp"
#include "run/distributed.hpp"
#include "run/fake_device.hpp"
#include "run/mpi_loader.hpp"
#include "schedule_source.hpp"
#include "sim_inputs.hpp"

namespace ppsched::cli {

namespace {

struct RunOptions {
  SourceOptions source;
  SimInputOptions inputs;
  std::string backend = "cuda";
  std::vector<int> devices;
  std::string workload = "gemm";
  run::GemmShape shape;
  std::string dtype = "bf16";
  std::uint64_t activation_bytes = 0;
  run::MeasureOptions measure;  // the warm-up and the stop rule
  std::string format = "text", output = "-", trace, cost_out;
  double min_ratio = 0, max_ratio = 0;
  double fake_jitter = 0.02;
  int fake_devices = 1;
  std::vector<int> rank_map;  // multi-process: the process of each rank
  std::string topology_out;   // multi-process: where the processes ran, with the measured links
};

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

// Reads and checks every schedule before any device work. Returns 0, or the exit code.
int load_requests(RunOptions& opt, bool predict_from_measurement, std::vector<run::RunRequest>& requests) {
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
    req.predict_from_measurement = predict_from_measurement;
    req.schedule = std::move(*prepared).take_as_run();
    requests.push_back(std::move(req));
  }
  return kExitOk;
}

// The GEMM workload without a given cost table: does the simulator, given the run's own measured
// per-action times, predict the measured iteration?
bool predicts_from_measurement(const RunOptions& opt) {
  return opt.workload == "gemm" && opt.inputs.cost.empty() && opt.inputs.costs.empty();
}

// Ctrl-C stops at the next iteration boundary; the outputs are written afterwards with the usual
// protection (install_output_signal_handlers) back in place.
void stop_at_iteration_boundary_on_interrupt() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

std::string no_gpu_text(const run::Discovery& d) {
  return no_gpu_message(d) + " (--backend fake runs the same engine without a GPU)";
}

// The report, the trace, the cost table and the measured topology; then the exit code.
int write_outputs(const RunOptions& opt, const run::BenchmarkReport& rep) {
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
  if (rep.interrupted) return g_signal.load() == SIGTERM ? 128 + SIGTERM : kExitInterrupted;
  for (const run::RunResult& r : rep.results) {
    const double ratio = r.ratio();
    if ((opt.min_ratio > 0 && ratio < opt.min_ratio) || (opt.max_ratio > 0 && ratio > opt.max_ratio)) {
      print_error(fmt::format("'{}': measured/simulated = {:.3f}, outside [{}, {}]", r.name, ratio, opt.min_ratio,
                              opt.max_ratio > 0 ? fmt::format("{}", opt.max_ratio) : "inf"));
      return kExitFindings;
    }
  }
  return kExitOk;
}

std::unique_ptr<run::DeviceRuntime> make_runtime(const RunOptions& opt) {
  if (opt.backend == "fake")
    return std::make_unique<run::FakeRuntime>(run::FakeOptions{opt.fake_devices, opt.fake_jitter, 1});
  return run::make_cuda_runtime();
}

int run_single_process(RunOptions opt) {
  if (!opt.rank_map.empty() || !opt.topology_out.empty()) {
    print_error(std::string(!opt.rank_map.empty() ? "--rank-map" : "--topology-out") +
                " places ranks on the processes of a multi-process run: start ppsched under mpirun or srun");
    return kExitUsage;
  }
  std::vector<run::RunRequest> requests;
  if (int code = load_requests(opt, predicts_from_measurement(opt), requests)) return code;
  std::unique_ptr<run::DeviceRuntime> runtime = make_runtime(opt);
  run::MeasureOptions measure = opt.measure;
  measure.interrupted = &g_interrupted;
  stop_at_iteration_boundary_on_interrupt();
  run::BenchmarkReport rep;
  try {
    rep = run::run_benchmarks(*runtime, std::move(requests), opt.devices, measure);
  } catch (const run::PlanError& e) {
    install_output_signal_handlers();
    print_error(e.what());
    return kExitFindings;
  } catch (const TimedDeadlock&) {
    install_output_signal_handlers();
    print_error("the schedule deadlocks in the simulator (ppsched simulate shows where)");
    return kExitFindings;
  } catch (const run::DeviceError& e) {
    install_output_signal_handlers();
    print_error(std::string("device error: ") + e.what());
    return kExitFindings;
  } catch (const std::invalid_argument& e) {
    install_output_signal_handlers();
    print_error(e.what());
    return kExitUsage;
  }
  install_output_signal_handlers();
  if (rep.discovery.status != run::Discovery::Status::Ok) {
    print_error(no_gpu_text(rep.discovery));
    return kExitNoGpu;
  }
  return write_outputs(opt, rep);
}

// What a process other than 0 writes to stderr while it prepares the run, held back: when every
// process reads the same bad input, process 0 alone says so; a process that fails where process
// 0 did not prints what it held.
class HeldStderr {
 public:
  HeldStderr() {
    std::fflush(stderr);
    file_ = std::tmpfile();
    saved_ = ::dup(STDERR_FILENO);
    if (file_ && saved_ >= 0) ::dup2(::fileno(file_), STDERR_FILENO);
  }
  ~HeldStderr() { release(false); }
  HeldStderr(const HeldStderr&) = delete;
  HeldStderr& operator=(const HeldStderr&) = delete;
  /// Restores stderr; prints what was held when `show`.
  void release(bool show) {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    saved_ = -1;
    if (show && file_) {
      std::rewind(file_);
      char buf[4096];
      for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, file_)) > 0;) std::fwrite(buf, 1, n, stderr);
    }
    if (file_) std::fclose(file_);
    file_ = nullptr;
  }

 private:
  std::FILE* file_ = nullptr;
  int saved_ = -1;
};

// One process of a multi-process run (run/distributed.hpp): every process reads and checks the
// same inputs, agrees with the others to start, runs its rank; process 0 writes the outputs.
int run_multi_process(RunOptions opt, run::ProcessGroup& group, double started_at_s) {
  const int me = group.rank();
  const double timeout_s = opt.measure.rule.timeout_s;
  std::vector<run::RunRequest> requests;
  auto held = me != 0 ? std::make_unique<HeldStderr>() : nullptr;
  int code = load_requests(opt, predicts_from_measurement(opt), requests);
  run::DistributedOptions dopt;
  dopt.rank_map = opt.rank_map;
  dopt.started_at_s = started_at_s;
  dopt.timeout_s = timeout_s;
  dopt.barrier_each_iteration = opt.backend == "cuda";
  dopt.predict_with_measured_links = opt.backend == "cuda";
  if (code == kExitOk)
    for (const run::RunRequest& r : requests) try {
        run::place_ranks(static_cast<std::uint32_t>(r.schedule.rank_count()), group.size(), opt.rank_map);
      } catch (const std::invalid_argument& e) {
        print_error(e.what());
        code = kExitUsage;
        break;
      }
  const std::uint64_t fingerprint = run::run_fingerprint(
      std::string(PPSCHED_VERSION) + " " + run::executable_digest() + " " + opt.backend, requests, opt.measure, dopt);
  run::StartVerdict verdict;
  try {
    verdict = run::agree_to_start(group, code, fingerprint, timeout_s);
  } catch (const run::GroupError& e) {
    if (held) held->release(true);
    print_error(fmt::format("process {}: {}", me, e.what()));
    group.abort(kExitFindings);
  }
  if (held) held->release(code != kExitOk && verdict.first_ready);
  if (verdict.exit_code != 0) {
    if (me == 0 && code == kExitOk) print_error(verdict.why);
    return verdict.exit_code;
  }

  std::unique_ptr<run::DeviceRuntime> backend = make_runtime(opt);
  run::CountingRuntime runtime(*backend);
  dopt.discoveries = [&] { return runtime.discoveries(); };
  dopt.opens = [&] { return runtime.opens(); };
  run::MeasureOptions measure = opt.measure;
  measure.interrupted = &g_interrupted;
  stop_at_iteration_boundary_on_interrupt();
  run::BenchmarkReport rep;
  try {
    rep = run::run_distributed(runtime, group, std::move(requests), dopt, measure);
  } catch (const std::exception& e) {
    // Any failure here ends the whole job: the others would wait for this process forever.
    const run::ProcessPlace& place = group.places().at(me);
    print_error(fmt::format("process {} on {}: {}; ending the run", me, place.host, e.what()));
    group.abort(kExitFindings);
  }
  install_output_signal_handlers();
  if (rep.discovery.status != run::Discovery::Status::Ok) {
    if (me == 0) print_error(no_gpu_text(rep.discovery));
    return kExitNoGpu;
  }
  if (me != 0) return rep.interrupted ? kExitInterrupted : kExitOk;
  return write_outputs(opt, rep);
}

int run_run(RunOptions opt) {
  // Under a launcher that started several processes, this is one of them.
  if (run::launcher_world_size() <= 1) return run_single_process(std::move(opt));
  const double started_at_s = run::steady_seconds();
  std::unique_ptr<run::ProcessGroup> group;
  try {
    group = run::join_launched_group();
  } catch (const run::GroupError& e) {
    print_error(std::string("a launcher started this process as one of several, but it cannot join them: ") + e.what());
    return kExitUsage;
  }
  return run_multi_process(std::move(opt), *group, started_at_s);
}

}  // namespace

void add_run_command(CLI::App& app, std::vector<Command>& commands) {
  auto opt = std::make_shared<RunOptions>();
  opt->source.lower = "send-recv";  // what PyTorch's runtime executes
  CLI::App* sub = app.add_subcommand("run",
                                     "Execute schedules on GPUs (this node's, or one process per GPU under mpirun or "
                                     "srun), measure them, compare with the simulator");
  add_source_options(*sub, opt->source);
  add_sim_input_options(*sub, opt->inputs);
  sub->add_option("--backend", opt->backend,
                  "cuda (default), or fake: replay the costs without a GPU (tests, dry runs)")
      ->check(CLI::IsMember({"cuda", "fake"}))
      ->option_text("cuda|fake");
  sub->add_option("--devices", opt->devices, "Device ordinals to use, e.g. 0,1 (default: all visible)")
      ->delimiter(',')
      ->check(finite_non_negative());
  sub->add_option("--workload", opt->workload, "gemm (cuBLAS linear layers) or synthetic (spin for each action's cost)")
      ->check(CLI::IsMember({"gemm", "synthetic"}))
      ->option_text("gemm|synthetic");
  sub->add_option("--layers", opt->shape.layers, "gemm: linear layers per stage")->check(CLI::Range(1u, 4096u));
  sub->add_option("--hidden", opt->shape.hidden, "gemm: hidden size")->check(CLI::Range(1u, 1u << 20));
  sub->add_option("--tokens", opt->shape.tokens, "gemm: tokens per microbatch")->check(CLI::Range(1u, 1u << 24));
  sub->add_option("--dtype", opt->dtype, "gemm: bf16 or fp32")->check(CLI::IsMember({"bf16", "fp32"}));
  sub->add_option("--activation-bytes", opt->activation_bytes,
                  "Bytes per transfer when the stage spec gives none (default: tokens x hidden)");
  sub->add_option("-w,--warmup", opt->measure.warmup, "Untimed iterations first (default 5)");
  sub->add_option("-n,--iters", opt->measure.rule.max_iters,
                  "Exactly this many timed iterations (default: the stop rule)");
  sub->add_option("--min-samples", opt->measure.rule.min_samples,
                  "Stop rule: at least this many iterations (default 10)");
  sub->add_option("--min-time", opt->measure.rule.min_time_s,
                  "Stop rule: at least this much measured time, s (default 0.5)")
      ->check(finite_non_negative());
  sub->add_option("--max-noise", opt->measure.rule.max_noise_pct,
                  "Stop rule: stop when the CV% is at most this (default 0.5)")
      ->check(finite_non_negative());
  sub->add_option("--timeout", opt->measure.rule.timeout_s,
                  "Stop rule: give up timing after this many seconds; multi-process runs: also the longest any "
                  "process waits for another (default 15)")
      ->check(finite_non_negative());
  sub->add_option("--format", opt->format, "text (a table with # headers) or json")
      ->check(CLI::IsMember({"text", "json"}));
  sub->add_option("-o,--output", opt->output, "Write the report here (default: stdout)");
  sub->add_option("--trace", opt->trace, "Chrome trace of the last timed iteration (as simulate's)");
  sub->add_option("--cost-out", opt->cost_out,
                  "Write the measured cost table (stage,kind,time_us) for simulate --costs");
  sub->add_option("--min-ratio", opt->min_ratio, "Exit 1 when measured/simulated is below this")
      ->check(finite_non_negative());
  sub->add_option("--max-ratio", opt->max_ratio, "Exit 1 when measured/simulated is above this")
      ->check(finite_non_negative());
  sub->add_option("--fake-jitter", opt->fake_jitter, "fake backend: each launch varies by up to this fraction (0.02)")
      ->check(finite_in(0.0, 0.9));
  sub->add_option("--fake-devices", opt->fake_devices, "fake backend: how many devices it pretends to have (1)")
      ->check(CLI::Range(1, 64));
  sub->add_option("--rank-map", opt->rank_map,
                  "Multi-process runs: the process of each pipeline rank, e.g. 0,8,1,9 (default: rank r on process r)")
      ->delimiter(',')
      ->check(CLI::Range(0, 1 << 20));
  sub->add_option("--topology-out", opt->topology_out,
                  "Multi-process runs: write where the ranks ran, with the measured links, as a topology file for "
                  "simulate --topology");
  sub->footer(
      "Example:\n  ppsched run --schedule 1F1B,ZBH1 --ranks 4 --microbatches 8 --cost-out measured.csv   (--backend "
      "fake without a GPU)");
  commands.push_back({sub, [opt] { return run_run(*opt); }});
}

}  // namespace ppsched::cli
