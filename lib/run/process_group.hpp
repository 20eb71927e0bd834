// The processes of a multi-process `ppsched run`, as the engine needs them: who this process is,
// where every process runs, a few collectives, and ordered point-to-point messages.
//
// The launcher (mpirun, srun) starts one process per GPU; the MPI implementation lives in a module
// that ppsched dlopen()s only under a launcher (run/mpi/, loaded by run/mpi_loader.hpp), so the
// ppsched binary needs no MPI library to start. Tests also use an in-process implementation
// whose "processes" are threads (tests/support/thread_group.hpp).
//
// Every blocking call takes a timeout and throws GroupError when it passes, naming what it waited
// for: a process that died or hangs never leaves the others waiting forever.
//
// Messages between two processes with the same tag arrive in the order they were sent (MPI's
// non-overtaking rule), which is how NCCL matches point-to-point operations on one communicator.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace ppsched::run {

/// A group call that failed or passed its deadline; the message says what it waited for.
class GroupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Where one process runs.
struct ProcessPlace {
  std::string host;    ///< the node's host name
  int node = 0;        ///< processes sharing memory (one node), numbered in order of their lowest process
  int local_rank = 0;  ///< its index among the processes of its node: the GPU it picks
  int local_size = 1;  ///< processes on its node
};

using Bytes = std::vector<std::uint8_t>;

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Every process's place, indexed by process (the same on every process).
  virtual const std::vector<ProcessPlace>& places() const = 0;
  /// What runs the group: "Open MPI v4.1.4", "threads".
  virtual std::string implementation() const = 0;

  virtual void barrier(double timeout_s) = 0;
  /// Process `root`'s bytes, on every process (any size; the others' input is replaced).
  virtual void broadcast(Bytes& bytes, int root, double timeout_s) = 0;
  /// Every process's bytes (any size each), indexed by process, on every process.
  virtual std::vector<Bytes> all_gather(std::span<const std::uint8_t> bytes, double timeout_s) = 0;
  /// The largest `value` of any process, on every process.
  virtual double all_max(double value, double timeout_s) = 0;

  /// Sends `bytes` to process `peer` under `tag` (0..255) and returns at once: the bytes are
  /// copied, and delivered once `peer` receives them.
  virtual void send(int peer, int tag, std::span<const std::uint8_t> bytes) = 0;
  /// Receives the next message from `peer` under `tag`, which must be exactly `into.size()`
  /// bytes (GroupError otherwise).
  virtual void recv(int peer, int tag, std::span<std::uint8_t> into, double timeout_s) = 0;

  /// Ends every process of the job with exit code `code` (MPI_Abort). The caller has already
  /// printed why.
  [[noreturn]] virtual void abort(int code) = 0;
};

}  // namespace ppsched::run
