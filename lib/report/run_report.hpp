// The faces of `ppsched run`: a table with "#" header lines for people, a JSON document for
// tools, the Chrome trace of a measured iteration, and the message when no GPU can be used.
//
//   # ppsched 1.2.3 run: backend fake, driver none, runtime none
//   # device 0: fake device 0 (replays the cost table)
//   # workload synthetic: each action spins for its cost (F=100,B=200)
//   # warm-up 1; stop: 3 iterations
//   # sim_us: the simulator with the given costs; times per iteration in microseconds; p99 by nearest rank
//   #           schedule ranks  mbs warmup  iters   median_us      p99_us      min_us      max_us    cv%  ...
//                   1F1B     2    2      1      3       900.0       900.0       900.0       900.0   0.00  ...
//   # peak memory per device, MiB: measured (buffers) / predicted (memory model) / fixed (weights)
//   #               1F1B device 0: 832.0 / 768.0 / 0.0
//
//   (the row goes on: sim_us 900.0, ratio 1.000, stop iterations)
//
// How to read it: median_us is the measured iteration, sim_us the timed simulator's makespan for
// the same schedule, and ratio = median / sim (1 means the simulator predicted the run). JSON:
// {schema_version, config, env, devices[], results[]}, each result with the iteration's
// statistics (p50/p99/min/max/avg/stdev/cv), every timed iteration, the memory per device and
// per (stage, kind) the action timings.
#pragma once

#include <string>

#include "io/byte_sink.hpp"
#include "run/benchmark.hpp"

namespace ppsched {

/// What a run was asked to do, as its report states it.
struct RunReportConfig {
  std::string version;                   ///< ppsched's
  std::string backend;                   ///< cuda or fake
  std::string workload;                  ///< gemm or synthetic
  std::string dtype;                     ///< gemm: bf16 or fp32
  run::GemmShape shape;                  ///< gemm: layers, hidden size, tokens
  std::size_t warmup = 0;                ///< untimed iterations first
  run::StopRule stop;                    ///< when timing stops
  std::string cost;                      ///< the per-rank costs as given ("F=1,I=1,W=1,B=2 (unit)" when not)
  std::string costs_file;                ///< "" when none
  bool sim_from_measured_costs = false;  ///< sim_us predicts from this run's own measured cost table
};

std::string run_report_text(const RunReportConfig& config, const run::BenchmarkReport& report);
std::string run_report_json(const RunReportConfig& config, const run::BenchmarkReport& report);

/// The Chrome trace (report/trace_view.hpp) of `result`'s last timed iteration, on the device
/// streams ("gpu compute", "gpu send", "gpu recv"), labelled with the backend that ran it.
void write_measured_trace(const run::RunResult& result, const std::string& backend, ByteSink& out);

/// Why `discovery` (not Ok) leaves no GPU to run on: "no usable GPU (no GPU driver): <message>".
std::string no_gpu_message(const run::Discovery& discovery);

/// The first result whose measured/simulated ratio is outside [min_ratio, max_ratio] (a bound
/// <= 0 is none), as --min-ratio and --max-ratio report it: "'1F1B': measured/simulated = 1.000,
/// outside [1.5, inf]"; empty when every result is inside.
std::string ratio_bounds_problem(const run::BenchmarkReport& report, double min_ratio, double max_ratio);

}  // namespace ppsched
