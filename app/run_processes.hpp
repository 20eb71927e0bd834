// `ppsched run` as one of several processes a launcher (mpirun, srun) started: every process
// reads and checks the same inputs, agrees with the others to start, runs its rank; process 0
// writes the outputs (run/distributed.hpp has the order of steps).
#pragma once

#include "run_steps.hpp"

namespace ppsched::cli {

/// Joins the processes the launcher started and runs this one's part; returns its exit code.
int run_launched_process(RunOptions opt);

}  // namespace ppsched::cli
