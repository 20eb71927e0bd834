// Joining the processes a launcher started (mpirun, srun): the MPI implementation of ProcessGroup
// lives in a module, libppsched_mpi.so beside the ppsched binary (run/mpi/), built where CMake
// finds MPI and loaded only here, so a ppsched that never runs under a launcher needs no MPI
// library at all.
#pragma once

#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

#include "run/process_group.hpp"

namespace ppsched::run {

/// How many processes the launcher that started this one says the job has, from its environment:
/// Open MPI's mpirun (OMPI_COMM_WORLD_SIZE), MPICH's hydra and srun --mpi=pmi2 (PMI_SIZE),
/// srun --mpi=pmix (PMIX_RANK, with Slurm's task count: PMIx exports no size; see the .cpp).
/// 0 when no launcher started it, or its count is not a positive number.
int launcher_world_size(const std::function<const char*(const char*)>& env = [](const char* n) {
  return std::getenv(n);
});

/// Loads the MPI module and joins the job (MPI_Init; every process's place gathered). Throws
/// GroupError saying why not: ppsched was built without MPI, the module cannot be loaded (its
/// dlerror), or MPI_Init failed.
std::unique_ptr<ProcessGroup> join_launched_group();

}  // namespace ppsched::run
