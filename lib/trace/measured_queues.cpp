#include "trace/measured_queues.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace ppsched {

namespace {

// What each model's streams look like, by P2pQueues value.
constexpr const char* kLayout[] = {"one for all of a rank's transfers", "one for activations, one for gradients",
                                   "one per directed rank pair", "one per rank pair"};

// Whether, on every rank, the queues of `q` and the streams are the same partition of its
// transfers: one stream per queue and one queue per stream.
bool streams_match(const TraceAnalysis& a, const std::vector<std::uint32_t>& stage_to_rank, P2pQueues q) {
  for (std::uint32_t r = 0; r < a.ranks.size(); ++r) {
    using Queue = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>;  // a CommQueueKey's fields
    std::map<Queue, std::int64_t> stream_of_queue;
    std::map<std::int64_t, Queue> queue_of_stream;
    for (const MeasuredAction& x : a.ranks[r].actions) {
      if (!is_send_recv(x.action.kind) || !x.has_gpu || x.gpu_stream < 0) continue;
      const CommQueueKey key = comm_queue_key(q, x.action.kind, x.action.stage, r, stage_to_rank);
      const Queue k{key.channel, key.from, key.to};
      auto [s, s_new] = stream_of_queue.emplace(k, x.gpu_stream);
      auto [t, t_new] = queue_of_stream.emplace(x.gpu_stream, k);
      if (s->second != x.gpu_stream || t->second != k) return false;
    }
  }
  return true;
}

}  // namespace

MeasuredQueues measured_p2p_queues(const TraceAnalysis& a) {
  MeasuredQueues out;
  std::size_t transfers = 0;
  for (const MeasuredRank& rank : a.ranks) {
    std::vector<std::int64_t> streams;
    for (const MeasuredAction& x : rank.actions)
      if (is_send_recv(x.action.kind) && x.has_gpu && x.gpu_stream >= 0) {
        streams.push_back(x.gpu_stream);
        ++transfers;
      }
    std::sort(streams.begin(), streams.end());
    out.streams = std::max<std::size_t>(out.streams, std::unique(streams.begin(), streams.end()) - streams.begin());
  }
  if (transfers == 0) {
    out.evidence = "no SEND or RECV kernel in the trace";
    return out;
  }
  const std::vector<std::uint32_t> stage_to_rank = stage_to_rank_in_use(a.executed);
  for (P2pQueues q : {P2pQueues::PerRank, P2pQueues::PerDirection, P2pQueues::PerPair, P2pQueues::PerEdge})
    if (streams_match(a, stage_to_rank, q)) {
      out.queues = q;
      out.evidence = fmt::format("{} SEND/RECV kernels on up to {} NCCL stream{} per rank: {}", transfers, out.streams,
                                 out.streams == 1 ? "" : "s", kLayout[static_cast<int>(q)]);
      return out;
    }
  out.evidence = fmt::format(
      "{} SEND/RECV kernels on up to {} NCCL streams per rank, which no communicator model (per-rank, "
      "per-direction, per-pair, per-edge) partitions the same way",
      transfers, out.streams);
  return out;
}

}  // namespace ppsched
