// `ppsched simulate --simulator pytorch-steps`: PyTorch's lock-step dry run of a prepared schedule
// (sim/pytorch_steps.hpp), written as a grid, JSON or PyTorch's simulated CSV.
#pragma once

#include <string>

#include "ir/schedule.hpp"
#include "report/simulate_report.hpp"
#include "sim/leaf_census.hpp"

namespace ppsched::cli {

/// Runs the dry run over `s` (lowered with send/recv), whose programs become the timelines (a
/// deadlock leaves them as they were, for its message), and writes them to `output` in `format`
/// (text, json or csv). `census`, from refuse_invalid_schedule (the schedule's own context), holds
/// the sizes and placement `s` leaves to inference: three passes over the actions fewer. Returns
/// the exit code, having printed any problem.
int run_dry_run(Schedule& s, const LeafCensus* census, const SimulateSource& source, const std::string& format,
                const std::string& output);

}  // namespace ppsched::cli
