// The one C entry point of the MPI module (run/mpi/, libppsched_mpi.so): its name and type, in
// one place for the module that defines it and the loader that looks it up (run/mpi_loader.cpp).
//
// It is a C symbol so that dlsym finds it by a plain name, and it throws nothing: an exception
// does not cross a C boundary. The ProcessGroup it returns is a C++ object all the same, shared
// by both sides through the header-only seam run/process_group.hpp, so both must be built by
// the same compiler (they are: one CMake build).
#pragma once

#include <cstddef>

#include "run/process_group.hpp"

/// Joins the job the launcher started (MPI_Init). Returns a new group, owned by the caller, or
/// nullptr with the reason written to `error` (NUL-terminated, cut to `error_size` bytes).
extern "C" {
using ppsched_make_mpi_group_fn = ppsched::run::ProcessGroup* (*)(char* error, std::size_t error_size);
}

namespace ppsched::run {
inline constexpr const char* kMpiGroupFactory = "ppsched_make_mpi_group";
}  // namespace ppsched::run
