// `ppsched simulate --simulator pytorch-steps`: PyTorch's lock-step dry run of a prepared schedule
// (sim/pytorch_steps.hpp), written as a grid, JSON or PyTorch's simulated CSV.
#pragma once

#include <optional>
#include <string>

#include "ir/schedule.hpp"
#include "report/simulate_report.hpp"
#include "schedule_source.hpp"

namespace ppsched::cli {

/// Runs the dry run over `s` (lowered with send/recv), whose programs become the timelines (a
/// deadlock leaves them as they were, for its message), and writes them to `output` in `format`
/// (text, json or csv). `known`: what shape_from_census found of `s` (three passes over the
/// actions fewer). Returns the exit code, having printed any problem.
int run_dry_run(Schedule& s, const std::optional<InferredShapeOf>& known, const SimulateSource& source,
                const std::string& format, const std::string& output);

}  // namespace ppsched::cli
