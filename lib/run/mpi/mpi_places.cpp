#include "mpi_places.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "mpi_poll.hpp"

namespace ppsched::run::mpi {

namespace {

void check(int rc, const char* call) {
  if (rc != MPI_SUCCESS) throw GroupError(std::string(call) + " (finding each process's node): " + error_text(rc));
}

void put_int(Bytes& out, std::size_t at, int v) { std::memcpy(out.data() + at, &v, sizeof v); }

int get_int(const Bytes& in, std::size_t at) {
  int v = 0;
  std::memcpy(&v, in.data() + at, sizeof v);
  return v;
}

}  // namespace

LocalPlace find_local_place(MPI_Comm comm, Clock::time_point deadline) {
  LocalPlace p;
  int rank = 0;
  check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");

  char host[MPI_MAX_PROCESSOR_NAME];
  int host_len = 0;
  check(MPI_Get_processor_name(host, &host_len), "MPI_Get_processor_name");
  p.place.host.assign(host, static_cast<std::size_t>(host_len));

  // Keyed by rank, so local ranks follow ranks and local rank 0 is the node's lowest rank.
  MPI_Comm node = MPI_COMM_NULL;
  check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int rc = MPI_Comm_rank(node, &p.place.local_rank);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(node, &p.place.local_size);
  // The node's leader is told by the leader itself: a broadcast within the node. When it does
  // not complete in time, its buffer and the node communicator are left behind on purpose: a
  // pending collective can be neither cancelled nor freed, and MPI may still write the buffer.
  auto leader = std::make_unique<int>(rank);
  MPI_Request request = MPI_REQUEST_NULL;
  if (rc == MPI_SUCCESS) rc = MPI_Ibcast(leader.get(), 1, MPI_INT, 0, node, &request);
  check(rc, "MPI_Comm_rank/MPI_Comm_size/MPI_Ibcast on the node");
  bool done = false;
  check(test_until(request, deadline, MPI_STATUS_IGNORE, done), "MPI_Ibcast on the node");
  if (!done) {
    (void)leader.release();
    throw GroupError("process " + std::to_string(rank) +
                     ": the processes of its node did not all take part in finding their node at start-up");
  }
  p.node_leader = *leader;
  MPI_Comm_free(&node);
  return p;
}

Bytes encode_place(const LocalPlace& p) {
  Bytes out(3 * sizeof(int) + p.place.host.size());
  put_int(out, 0, p.node_leader);
  put_int(out, sizeof(int), p.place.local_rank);
  put_int(out, 2 * sizeof(int), p.place.local_size);
  std::memcpy(out.data() + 3 * sizeof(int), p.place.host.data(), p.place.host.size());
  return out;
}

LocalPlace decode_place(const Bytes& bytes) {
  if (bytes.size() < 3 * sizeof(int))
    throw GroupError("a process sent its place in " + std::to_string(bytes.size()) + " bytes");
  LocalPlace p;
  p.node_leader = get_int(bytes, 0);
  p.place.local_rank = get_int(bytes, sizeof(int));
  p.place.local_size = get_int(bytes, 2 * sizeof(int));
  p.place.host.assign(bytes.begin() + 3 * sizeof(int), bytes.end());
  return p;
}

std::vector<ProcessPlace> number_nodes(const std::vector<LocalPlace>& locals) {
  std::vector<int> leaders;
  for (const auto& l : locals) leaders.push_back(l.node_leader);
  std::sort(leaders.begin(), leaders.end());
  leaders.erase(std::unique(leaders.begin(), leaders.end()), leaders.end());
  std::vector<ProcessPlace> places;
  for (const auto& l : locals) {
    ProcessPlace p = l.place;
    p.node = static_cast<int>(std::lower_bound(leaders.begin(), leaders.end(), l.node_leader) - leaders.begin());
    places.push_back(std::move(p));
  }
  return places;
}

}  // namespace ppsched::run::mpi
