// The steps of `ppsched run` that a single process and each process of a multi-process run
// (run_processes.hpp) take alike: read and check every schedule before any device work, make the
// device runtime, stop at an iteration boundary on Ctrl-C, and write the report, the trace, the
// cost table and the measured topology. The flags are cmd_run.cpp's; the engine is lib/run and
// the faces report/run_report.hpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "run/benchmark.hpp"
#include "run/device.hpp"
#include "schedule_source.hpp"
#include "sim_inputs.hpp"

namespace ppsched::cli {

/// What `ppsched run` is asked, as its flags give it.
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

/// Reads, prepares and validates every schedule of `opt` (a comma-separated --schedule list, or
/// the file) into `requests`, before any device work; a schedule that fails validation is refused
/// with validate's diagnostics. Returns 0, or the exit code after saying why.
int load_requests(RunOptions& opt, std::vector<run::RunRequest>& requests);

/// The backend --backend names: the fake device, or the CUDA module loaded from beside the binary.
std::unique_ptr<run::DeviceRuntime> make_device_runtime(const RunOptions& opt);

/// From here on Ctrl-C (and SIGTERM) stop the timing at the next iteration boundary, through
/// `measure.interrupted`; the outputs are written afterwards with the usual protection
/// (install_output_signal_handlers), which the caller puts back.
void stop_at_iteration_boundary_on_interrupt(run::MeasureOptions& measure);

/// The signal that interrupted the timing (0: none), as this process saw it; adopt_interrupt_signal
/// takes the one the processes of a run agreed on. interrupted_exit_code: 143 after SIGTERM, else 130.
int interrupt_signal();
void adopt_interrupt_signal(int sig);
int interrupted_exit_code();

/// Why no GPU can be used, and the way out (--backend fake).
std::string no_gpu_text(const run::Discovery& discovery);

/// Writes the report, the trace, the cost table and the measured topology the flags ask for;
/// returns the exit code: interrupted, a ratio outside --min-ratio/--max-ratio (findings), or ok.
int write_run_outputs(const RunOptions& opt, const run::BenchmarkReport& report);

}  // namespace ppsched::cli
