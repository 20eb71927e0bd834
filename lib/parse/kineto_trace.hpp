// PyTorch profiler (Kineto) traces: one Chrome-trace JSON file per rank, `.json` or `.json.gz`, as
// torch.profiler and torchtitan write them (`rank{N}_trace.json`). Read streaming with simdjson's
// On-Demand API (no DOM): only what a pipeline's analysis needs is kept, so memory is the file's
// text (inflated, for gzip) plus the kept events, whatever the trace holds besides.
//
// What is read (docs/formats.md, "Profiler traces"):
//   distributedInfo            rank and world_size
//   user_annotation            ProfilerStep#N (the profiled steps) and PP:<action>, the range
//                              PyTorch's _PipelineScheduleRuntime records around every action it
//                              executes (`PP:2F0`, `PP:1SEND_F3`)
//   cuda_runtime, cuda_driver  kernel launches, with their correlation id
//   kernel, gpu_memcpy,        what ran on the GPU, with the correlation id of its launch
//   gpu_memset
// An action's GPU time is that of the kernels launched inside its host range (on the same
// thread); a `gpu_user_annotation` of the same name, where the profiler recorded one, gives its
// span when no kernel is found. Everything else (cpu_op, python_function, flows, metadata) is
// skipped.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "diag/diagnostic.hpp"
#include "ir/measured.hpp"

namespace ppsched {

/// Reads one rank's trace. Problems (a file that cannot be read, truncated or invalid JSON with
/// its line and column, no distributedInfo, no ProfilerStep, no PP: range, an action name that is
/// not PyTorch's grammar) go to `sink` under rule `trace-file`; nullopt on any error.
std::optional<MeasuredRank> read_kineto_trace(const std::string& path, DiagnosticSink& sink);

/// The same on text in memory, reported as file `name` (tests and fuzz targets).
std::optional<MeasuredRank> read_kineto_trace_text(std::string_view name, std::string_view text, DiagnosticSink& sink);

}  // namespace ppsched
