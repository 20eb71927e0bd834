#include "model/comm.hpp"

namespace ppsched {

const Link& Topology::link(std::uint32_t from, std::uint32_t to) const {
  if (from < slice_of_rank.size() && to < slice_of_rank.size() && slice_of_rank[from] != slice_of_rank[to])
    return inter_slice;
  if (from < node_of_rank.size() && to < node_of_rank.size() && node_of_rank[from] != node_of_rank[to])
    return inter_node;
  return intra_node;
}

double CommModel::transfer_time(std::uint32_t stage, bool forward, std::uint32_t from, std::uint32_t to) const {
  if (!topology || from == to) return 0.0;
  const Link& l = topology->link(from, to);
  return l.latency_us + (l.bytes_per_us > 0 ? message_bytes(stage, forward) / l.bytes_per_us : 0.0);
}

}  // namespace ppsched
