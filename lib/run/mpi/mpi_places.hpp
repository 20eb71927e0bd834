// Where each process of the MPI group runs: its host, its node and its index on that node.
//
// MPI says which processes share memory (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED): that
// is a node here, the unit a process's local rank (the GPU it picks) counts within. Host names
// are only shown, never compared: two nodes may report the same name (containers), and one node
// may have several.
#pragma once

#include <mpi.h>

#include <vector>

#include "mpi_poll.hpp"
#include "run/process_group.hpp"

namespace ppsched::run::mpi {

/// What one process knows of its own place, before the group compares notes.
struct LocalPlace {
  ProcessPlace place;   ///< host, local_rank and local_size; node is not known yet
  int node_leader = 0;  ///< the lowest rank in `comm` among the processes of its node
};

/// This process's place among the processes of `comm` (collective: every process calls it).
/// GroupError when an MPI call fails or the processes of its node are not all there by
/// `deadline`.
LocalPlace find_local_place(MPI_Comm comm, Clock::time_point deadline);

/// A LocalPlace as bytes for an all-gather, and back.
Bytes encode_place(const LocalPlace& p);
LocalPlace decode_place(const Bytes& bytes);

/// Every process's place from every process's LocalPlace, indexed by rank: nodes are numbered
/// in order of their lowest rank, so node 0 holds rank 0.
std::vector<ProcessPlace> number_nodes(const std::vector<LocalPlace>& locals);

}  // namespace ppsched::run::mpi
