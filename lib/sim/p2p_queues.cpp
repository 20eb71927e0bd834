#include "sim/p2p_queues.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ppsched {

namespace {
constexpr std::string_view kNames[] = {"per-rank", "per-direction", "per-edge", "per-pair"};
}

std::optional<P2pQueues> parse_p2p_queues(std::string_view text) {
  for (std::size_t i = 0; i < std::size(kNames); ++i)
    if (text == kNames[i]) return static_cast<P2pQueues>(i);
  return std::nullopt;
}

std::string_view p2p_queues_name(P2pQueues q) { return kNames[static_cast<std::size_t>(q)]; }

std::string p2p_queues_summary(P2pQueues q) {
  switch (q) {
    case P2pQueues::PerRank:
      return {};
    case P2pQueues::PerDirection:
      return "a communicator per direction (activations, gradients) on each rank";
    case P2pQueues::PerEdge:
      return "a communicator per directed rank pair";
    case P2pQueues::PerPair:
      return "a communicator per rank pair";
  }
  return {};
}

CommQueueKey comm_queue_key(P2pQueues q, ActionKind kind, std::uint32_t stage, std::uint32_t rank,
                            const std::vector<std::uint32_t>& stage_to_rank) {
  const bool forward = kind == ActionKind::SendF || kind == ActionKind::RecvF;
  switch (q) {
    case P2pQueues::PerRank:
      return {};
    case P2pQueues::PerDirection:
      return {forward ? 0u : 1u, 0, 0};
    case P2pQueues::PerEdge:
    case P2pQueues::PerPair:
      break;
  }
  const bool is_send = kind == ActionKind::SendF || kind == ActionKind::SendB;
  // SEND_F and RECV_B talk to stage + 1, SEND_B and RECV_F to stage - 1.
  const bool up = forward == is_send;
  const std::uint64_t partner = up ? std::uint64_t{stage} + 1 : std::uint64_t{stage} - 1;
  if (stage == 0 && !up) return {2, rank, rank};  // no stage -1: a queue of its own
  if (partner >= stage_to_rank.size()) return {2, rank, rank};
  const std::uint32_t peer = stage_to_rank[partner];
  if (q == P2pQueues::PerPair) return {0, std::min(rank, peer), std::max(rank, peer)};
  return is_send ? CommQueueKey{0, rank, peer} : CommQueueKey{0, peer, rank};
}

std::string comm_queue_text(P2pQueues q, const CommQueueKey& key) {
  switch (q) {
    case P2pQueues::PerRank:
      return "its one communicator";
    case P2pQueues::PerDirection:
      return key.channel == 0 ? "its activation communicator" : "its gradient communicator";
    case P2pQueues::PerEdge:
    case P2pQueues::PerPair:
      break;
  }
  if (key.channel == 2) return "a communicator of its own (no partner stage)";
  if (q == P2pQueues::PerPair) return fmt::format("the rank {} <-> rank {} communicator", key.from, key.to);
  return fmt::format("the rank {} -> rank {} communicator", key.from, key.to);
}

}  // namespace ppsched
