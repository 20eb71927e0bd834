// `ppsched run`: execute schedules on this node's GPUs, time them the nvbench way, and compare the
// measured iteration with the simulated one. The work is in lib/run and the faces in
// report/run_report.hpp; this file binds flags and runs the schedules in one process
// (run_benchmarks discovers the devices once), or hands over to run_processes.hpp under a
// launcher. Reading, checking and writing are run_steps.hpp's.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "cli_support.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "io/output_file.hpp"
#include "ir/user_error.hpp"
#include "run/benchmark.hpp"
#include "run/mpi_loader.hpp"
#include "run/plan.hpp"
#include "run_processes.hpp"
#include "run_steps.hpp"

namespace ppsched::cli {

namespace {

int run_single_process(RunOptions opt) {
  if (!opt.rank_map.empty() || !opt.topology_out.empty()) {
    print_error(std::string(!opt.rank_map.empty() ? "--rank-map" : "--topology-out") +
                " places ranks on the processes of a multi-process run: start ppsched under mpirun or srun");
    return kExitUsage;
  }
  std::vector<run::RunRequest> requests;
  if (int code = load_requests(opt, requests)) return code;
  std::unique_ptr<run::DeviceRuntime> runtime = make_device_runtime(opt);
  run::MeasureOptions measure = opt.measure;
  stop_at_iteration_boundary_on_interrupt(measure);
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
  } catch (const UserError& e) {
    install_output_signal_handlers();
    print_error(e.what());
    return kExitUsage;
  }
  install_output_signal_handlers();
  if (rep.discovery.status != run::Discovery::Status::Ok) {
    print_error(no_gpu_text(rep.discovery));
    return kExitNoGpu;
  }
  return write_run_outputs(opt, rep);
}

// What a fake transfer carries unless --activation-bytes or a stage spec says otherwise.
constexpr std::uint64_t kFakeActivationBytes = 4096;

int run_run(RunOptions opt) {
  // Under a launcher that started several processes, this is one of them.
  if (run::launcher_world_size() <= 1) return run_single_process(std::move(opt));
  return run_launched_process(std::move(opt));
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
  CLI::Option* workload =
      sub->add_option("--workload", opt->workload,
                      "gemm (cuBLAS linear layers; the default on cuda) or synthetic (spin for each action's cost; the "
                      "default on fake)")
          ->check(CLI::IsMember({"gemm", "synthetic"}))
          ->option_text("gemm|synthetic");
  sub->add_option("--layers", opt->shape.layers, "gemm: linear layers per stage")->check(CLI::Range(1u, 4096u));
  sub->add_option("--hidden", opt->shape.hidden, "gemm: hidden size")->check(CLI::Range(1u, 1u << 20));
  sub->add_option("--tokens", opt->shape.tokens, "gemm: tokens per microbatch")->check(CLI::Range(1u, 1u << 24));
  sub->add_option("--dtype", opt->dtype, "gemm: bf16 or fp32")->check(CLI::IsMember({"bf16", "fp32"}));
  CLI::Option* activation_bytes = sub->add_option(
      "--activation-bytes", opt->activation_bytes,
      "Bytes per transfer when the stage spec gives none (default: tokens x hidden x the dtype's size; on fake 4096)");
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
  commands.push_back({sub, [opt, workload, activation_bytes] {
                        // The fake device replays costs: it runs no GEMM, and unless asked moves no
                        // GEMM-sized payload (32 MiB a transfer through MPI made the README's
                        // example take 80 s and stop at --timeout).
                        if (opt->backend == "fake") {
                          if (workload->count() == 0) opt->workload = "synthetic";
                          if (activation_bytes->count() == 0) opt->activation_bytes = kFakeActivationBytes;
                        }
                        return run_run(*opt);
                      }});
}

}  // namespace ppsched::cli
