// launcher_world_size over the environments the launchers give their processes, written out by
// hand: which variables mean "started by a launcher", and which only look like it. And the
// errors of join_launched_group that come before MPI: no module, or not a ppsched one (joining
// itself is tested on real processes by tests/mpi/group_check.cpp).
#include <stdlib.h>

#include <map>
#include <string>

#include "run/mpi_loader.hpp"
#include "support/catch.hpp"

using namespace ppsched::run;

namespace {

int size_in(const std::map<std::string, std::string>& vars) {
  return launcher_world_size([&](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

}  // namespace

TEST_CASE("launcher_world_size: each launcher's own variables") {
  CHECK(size_in({}) == 0);
  // Open MPI's mpirun -np 4.
  CHECK(size_in({{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "2"}, {"PMIX_RANK", "2"}}) == 4);
  // MPICH's hydra mpiexec -n 3; srun --mpi=pmi2 gives the same two.
  CHECK(size_in({{"PMI_SIZE", "3"}, {"PMI_RANK", "0"}}) == 3);
  // srun --mpi=pmix -n 8: PMIx gives the rank, Slurm the step's size.
  CHECK(size_in({{"PMIX_RANK", "5"}, {"SLURM_STEP_ID", "0"}, {"SLURM_NTASKS", "8"}, {"SLURM_NPROCS", "8"}}) == 8);
  // The step's own count first: inside an allocation of 16 tasks, a step of 4.
  CHECK(size_in({{"PMIX_RANK", "1"}, {"SLURM_STEP_ID", "2"}, {"SLURM_STEP_NUM_TASKS", "4"}, {"SLURM_NTASKS", "16"}}) ==
        4);
  CHECK(size_in({{"PMI_RANK", "1"}, {"SLURM_STEP_ID", "0"}, {"SLURM_NPROCS", "2"}}) == 2);
  // A wrapper that sets PMIX_SIZE beside PMIx's rank.
  CHECK(size_in({{"PMIX_RANK", "0"}, {"PMIX_SIZE", "6"}}) == 6);
  // Open MPI's own count wins over anything Slurm says (mpirun inside an allocation).
  CHECK(size_in({{"OMPI_COMM_WORLD_SIZE", "2"}, {"PMIX_RANK", "0"}, {"SLURM_STEP_ID", "0"}, {"SLURM_NTASKS", "64"}}) ==
        2);
}

TEST_CASE("launcher_world_size: what looks like a launch but is one process") {
  // The shell of an sbatch script: Slurm's counts without any launched task.
  CHECK(size_in({{"SLURM_NTASKS", "8"}, {"SLURM_NPROCS", "8"}, {"SLURM_JOB_ID", "1234"}}) == 0);
  // Slurm's batch step, which has a step id, but no launcher rank.
  CHECK(size_in({{"SLURM_NTASKS", "8"}, {"SLURM_STEP_ID", "4294967294"}, {"SLURM_JOB_ID", "1234"}}) == 0);
  // A PMIx rank and no size from anywhere: the size is unknown, so no launch is assumed.
  CHECK(size_in({{"PMIX_RANK", "0"}, {"PMIX_NAMESPACE", "prterun-host-1@1"}}) == 0);
}

TEST_CASE("launcher_world_size: a count that is not a positive number is 0") {
  for (const char* bad : {"", "0", "-4", "four", "4x", " 4", "4 ", "+4", "99999999999999999999"}) {
    INFO("OMPI_COMM_WORLD_SIZE=\"" << bad << "\"");
    CHECK(size_in({{"OMPI_COMM_WORLD_SIZE", bad}}) == 0);
    // The first variable present decides: a broken count is not patched up from another one.
    CHECK(size_in({{"OMPI_COMM_WORLD_SIZE", bad}, {"PMI_SIZE", "4"}}) == 0);
  }
  CHECK(size_in({{"OMPI_COMM_WORLD_SIZE", "1"}}) == 1);
  CHECK(size_in({{"PMI_SIZE", "1000000000"}}) == 1000000000);
  CHECK(size_in({{"PMI_SIZE", "1000000001"}}) == 0);
}

TEST_CASE("join_launched_group: a module that cannot be loaded, or is not one, is a GroupError saying why") {
  // Built without MPI, every join says so before looking for a module.
  const std::string without_mpi = "ppsched was built without MPI";
  setenv("PPSCHED_MPI_MODULE", "/nonexistent/libppsched_mpi.so", 1);
  try {
    (void)join_launched_group();
    FAIL("joined through a module that does not exist");
  } catch (const GroupError& e) {
    const std::string m = e.what();
    INFO(m);
    CHECK((m.starts_with(without_mpi) ||
           m == "the MPI module could not be loaded: /nonexistent/libppsched_mpi.so: cannot open shared object file: "
                "No such file or directory"));
  }
  // A shared library without the entry point.
  setenv("PPSCHED_MPI_MODULE", "libc.so.6", 1);
  try {
    (void)join_launched_group();
    FAIL("joined through libc");
  } catch (const GroupError& e) {
    const std::string m = e.what();
    INFO(m);
    CHECK((m.starts_with(without_mpi) ||
           m.starts_with("libc.so.6 has no ppsched_make_mpi_group: not a ppsched MPI module")));
  }
  unsetenv("PPSCHED_MPI_MODULE");
}
