// Which point-to-point transfers of a rank share one in-order queue: the communicator model a
// schedule is simulated and checked under (docs/rules.md, "Communicator queues"). The one home of
// that rule, which timed.cpp and the deadlock rule (check/deadlock_rule.cpp) both apply, of its
// flag syntax (`--p2p-queues per-rank|per-direction|per-edge`) and of its text in reports.
//
// NCCL runs the operations of one communicator in the order they were issued, on one stream:
// a SEND that waits for its RECV holds back every later SEND and RECV of that communicator, even
// towards another rank. Which transfers share a communicator is the runtime's choice:
//
//   per-rank       (the default) one communicator per rank for all its point-to-point traffic, as
//                  PyTorch's pipelining issues every SEND and RECV on the stage's process group
//                  (at 00722e64 and cff2ecc8, the two commits ppsched follows).
//   per-direction  two: one for activations (SEND_F, RECV_F), one for gradients (SEND_B,
//                  RECV_B), as pytorch/pytorch#186173 proposed. A looped schedule still puts
//                  unrelated stage edges in one queue (rank 0 sends to rank 1 and receives from
//                  rank 3 on the forward one).
//   per-pair       one per rank pair, both directions, as ProcessGroupNCCL gives unbatched
//                  point-to-point calls a communicator keyed by the pair: a rank's traffic with
//                  rank 1 and with rank 3 no longer wait for each other, but its SEND_F to rank 1
//                  and its RECV_B from rank 1 do.
//   per-edge       one per directed rank pair (source rank, destination rank), as
//                  pytorch/pytorch#195760 and #196666 derive them: a rank's SENDs to rank 1 and
//                  its RECVs from rank 3 no longer wait for each other.
//
// A schedule that finishes with shared queues finishes with finer ones (a queue split in two
// waits for less), so per-rank is also the strict case.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/action.hpp"

namespace ppsched {

enum class P2pQueues : std::uint8_t { PerRank, PerDirection, PerEdge, PerPair };

/// Reads "per-rank", "per-direction", "per-edge" or "per-pair"; nullopt for anything else.
std::optional<P2pQueues> parse_p2p_queues(std::string_view text);
/// The flag's spelling of `q`.
std::string_view p2p_queues_name(P2pQueues q);
/// One phrase for a report's time model, empty for per-rank (the default reports do not mention).
std::string p2p_queues_summary(P2pQueues q);

/// A SEND's or RECV's communicator queue, as its rank sees it: equal keys on one rank mean one
/// queue. `channel` 0 under per-rank, 0 (activations) or 1 (gradients) under per-direction; `from`
/// and `to` the transfer's directed rank pair under per-edge, the pair's lower and higher rank
/// under per-pair (else both 0).
struct CommQueueKey {
  std::uint32_t channel = 0, from = 0, to = 0;
  friend bool operator==(const CommQueueKey&, const CommQueueKey&) = default;
};

/// The queue of a `kind` SEND or RECV of stage `stage` on `rank`, with stages placed by
/// `stage_to_rank`. Its partner's stage is stage + 1 (SEND_F, RECV_B) or stage - 1; a partner
/// stage outside the placement puts it on a queue of its own rank alone.
CommQueueKey comm_queue_key(P2pQueues q, ActionKind kind, std::uint32_t stage, std::uint32_t rank,
                            const std::vector<std::uint32_t>& stage_to_rank);

/// "its one communicator", "its gradient communicator", "the rank 3 -> rank 0 communicator": the
/// queue `key` names, for a deadlock note.
std::string comm_queue_text(P2pQueues q, const CommQueueKey& key);

}  // namespace ppsched
