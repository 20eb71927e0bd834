// The faces of `ppsched trace` (trace/trace_analysis.hpp, trace/trace_compare.hpp): a text report
// of the measured run beside the simulated one, the same as JSON (measured_iteration_us,
// simulated_iteration_us, ...), the measured cost table, and one merged Chrome/Perfetto trace of
// every rank on the common clock.
#pragma once

#include <string>

#include "io/byte_sink.hpp"
#include "trace/trace_analysis.hpp"
#include "trace/trace_compare.hpp"

namespace ppsched {

std::string trace_text(const TraceAnalysis& measured, const TraceComparison& simulated, std::string_view runtime);
std::string trace_json(const TraceAnalysis& measured, const TraceComparison& simulated, std::string_view runtime);

/// The measured costs as the cost table `simulate --costs` and `tune --costs` read (stage,kind,time_us).
std::string measured_costs_csv(const TraceAnalysis& measured);

/// A Chrome trace (Perfetto opens it): one process per rank, its PP actions as slices on a GPU
/// track (their kernels' span) and a host track, on rank 0's clock; an arrow per SEND/RECV pair.
std::string merged_trace_json(const TraceAnalysis& measured);

/// The measured run's first step as simulate --html draws a simulated one (report/html_report.hpp):
/// its Gantt chart on the common clock and each rank's idle by cause; the summary's time model
/// line says what the simulator gives for the same order and costs.
void write_trace_html(const TraceAnalysis& measured, const TraceComparison& simulated, std::string_view runtime,
                      ByteSink& out);

}  // namespace ppsched
