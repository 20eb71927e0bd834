// Telling whether a launcher started this process, and joining its job through the MPI module
// (run/mpi/, libppsched_mpi.so), loaded here and nowhere else.
#include "run/mpi_loader.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <string>

#include "run/mpi_module.hpp"

namespace ppsched::run {

namespace {

// A launcher's process count: a positive decimal number and nothing else; 0 otherwise.
int parse_size(const char* text) {
  if (!text || !*text) return 0;
  long long n = 0;
  for (const char* c = text; *c; ++c) {
    if (*c < '0' || *c > '9') return 0;
    n = n * 10 + (*c - '0');
    if (n > 1'000'000'000) return 0;
  }
  return static_cast<int>(n);
}

#ifdef PPSCHED_HAVE_MPI
std::string executable_dir() {
  std::string buf(4096, '\0');
  const ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return ".";
  buf.resize(static_cast<std::size_t>(n));
  const auto slash = buf.rfind('/');
  return slash == std::string::npos ? "." : buf.substr(0, slash);
}

std::string dl_error(const std::string& fallback) {
  const char* why = dlerror();
  return why ? why : fallback;
}
#endif

}  // namespace

int launcher_world_size(const std::function<const char*(const char*)>& env) {
  const auto has = [&](const char* name) { return env(name) != nullptr; };
  // Open MPI's mpirun (and prterun with Open MPI's personality) says it plainly.
  if (has("OMPI_COMM_WORLD_SIZE")) return parse_size(env("OMPI_COMM_WORLD_SIZE"));
  // MPICH's hydra (mpiexec), and srun --mpi=pmi2.
  if (has("PMI_SIZE")) return parse_size(env("PMI_SIZE"));
  // srun --mpi=pmix gives each task PMIX_RANK but no size: PMIx keeps that in its own store
  // (PMIx_Get of PMIX_JOB_SIZE), so the step's task count comes from Slurm. SLURM_NTASKS alone
  // is no sign of a launch: the shell of an sbatch script has it too, and is one process.
  if ((has("PMIX_RANK") || has("PMI_RANK")) && has("SLURM_STEP_ID")) {
    for (const char* name : {"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_NPROCS"})
      if (has(name)) return parse_size(env(name));
  }
  // PMIx itself exports no size, but some wrappers around PMIx launchers set PMIX_SIZE.
  if (has("PMIX_RANK") && has("PMIX_SIZE")) return parse_size(env("PMIX_SIZE"));
  return 0;
}

std::unique_ptr<ProcessGroup> join_launched_group() {
#ifndef PPSCHED_HAVE_MPI
  throw GroupError(
      "ppsched was built without MPI (no MPI found when it was configured): install libopenmpi-dev and rebuild");
#else
  // PPSCHED_MPI_MODULE names another module (tests load the one in the build tree).
  const char* env = std::getenv("PPSCHED_MPI_MODULE");
  const std::string path = env && *env ? env : executable_dir() + "/libppsched_mpi.so";
  // RTLD_LOCAL is enough: the module exports one symbol that nothing else needs, and Open MPI
  // 4's own plugins (mca_*.so) each link libmpi/libopen-pal themselves, so they load even
  // though libmpi's symbols are not global (checked under mpirun with Open MPI 4.1.4).
  // Never unloaded: MPI keeps threads and handlers in it until the process ends.
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw GroupError("the MPI module could not be loaded: " + dl_error(path));
  auto factory = reinterpret_cast<ppsched_make_mpi_group_fn>(dlsym(handle, kMpiGroupFactory));
  if (!factory)
    throw GroupError(path + " has no " + kMpiGroupFactory + ": not a ppsched MPI module (" + dl_error("no symbol") +
                     ")");
  char error[1024] = "";
  ProcessGroup* group = factory(error, sizeof error);
  if (!group) throw GroupError(std::string("could not join the MPI job: ") + (*error ? error : "no reason given"));
  return std::unique_ptr<ProcessGroup>(group);
#endif
}

}  // namespace ppsched::run
