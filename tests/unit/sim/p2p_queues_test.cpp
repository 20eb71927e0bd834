// The communicator-queue model (sim/p2p_queues.hpp): its flag syntax, which transfers share a
// queue, and what splitting the queues changes in the timed simulator and the aggregate run.
#include "sim/p2p_queues.hpp"

#include <algorithm>

#include "passes/passes.hpp"
#include "sim/aggregate.hpp"
#include "sim/analysis.hpp"
#include "sim/timed.hpp"
#include "support/catch.hpp"
#include "synth/synth.hpp"

using namespace ppsched;

TEST_CASE("p2p queues: the four names are read and nothing else, and only the splits are summarised") {
  for (const char* name : {"per-rank", "per-direction", "per-edge", "per-pair"}) {
    INFO(name);
    REQUIRE(parse_p2p_queues(name));
    CHECK(p2p_queues_name(*parse_p2p_queues(name)) == name);
  }
  for (const char* bad : {"", "per_rank", "Per-Rank", "per_pair", "per-edge ", "rank"})
    CHECK_FALSE(parse_p2p_queues(bad));
  CHECK(p2p_queues_summary(P2pQueues::PerRank).empty());
  CHECK_FALSE(p2p_queues_summary(P2pQueues::PerDirection).empty());
  CHECK_FALSE(p2p_queues_summary(P2pQueues::PerEdge).empty());
  CHECK_FALSE(p2p_queues_summary(P2pQueues::PerPair).empty());
}

// 8 stages looped over 4 ranks: rank 0 holds stages 0 and 4, so it sends activations to rank 1
// and receives them from rank 3 (stage 3 -> 4), and the gradients go the other way.
TEST_CASE("p2p queues: which transfers of a rank share a queue") {
  const std::vector<std::uint32_t> loop = {0, 1, 2, 3, 0, 1, 2, 3};
  const auto key = [&](P2pQueues q, ActionKind k, std::uint32_t stage, std::uint32_t rank) {
    return comm_queue_key(q, k, stage, rank, loop);
  };
  using K = ActionKind;
  // Per rank: all one queue.
  CHECK(key(P2pQueues::PerRank, K::SendF, 0, 0) == key(P2pQueues::PerRank, K::RecvB, 4, 0));
  // Per direction: activations apart from gradients, whatever the peer.
  const auto dir = P2pQueues::PerDirection;
  CHECK(key(dir, K::SendF, 0, 0) == key(dir, K::RecvF, 4, 0));
  CHECK(key(dir, K::SendB, 4, 0) == key(dir, K::RecvB, 0, 0));
  CHECK_FALSE(key(dir, K::SendF, 0, 0) == key(dir, K::RecvB, 0, 0));
  // Per edge: the directed rank pair.
  const auto edge = P2pQueues::PerEdge;
  CHECK(key(edge, K::SendF, 0, 0) == CommQueueKey{0, 0, 1});
  CHECK(key(edge, K::SendF, 4, 0) == CommQueueKey{0, 0, 1});  // stage 4 -> 5 is rank 0 -> 1 too
  CHECK(key(edge, K::RecvF, 4, 0) == CommQueueKey{0, 3, 0});
  CHECK(key(edge, K::SendB, 4, 0) == CommQueueKey{0, 0, 3});
  CHECK(key(edge, K::RecvB, 0, 0) == CommQueueKey{0, 1, 0});
  // Both ends of a transfer name the same pair.
  CHECK(key(edge, K::SendF, 3, 3) == key(edge, K::RecvF, 4, 0));
  CHECK(key(edge, K::SendB, 5, 1) == key(edge, K::RecvB, 4, 0));
  // Per pair: both directions with one peer share a queue, another peer has its own.
  const auto pair = P2pQueues::PerPair;
  CHECK(key(pair, K::SendF, 0, 0) == CommQueueKey{0, 0, 1});
  CHECK(key(pair, K::RecvB, 0, 0) == CommQueueKey{0, 0, 1});  // from rank 1, the same pair
  CHECK(key(pair, K::RecvF, 4, 0) == CommQueueKey{0, 0, 3});
  CHECK(key(pair, K::SendB, 4, 0) == CommQueueKey{0, 0, 3});
  CHECK_FALSE(key(pair, K::SendF, 0, 0) == key(pair, K::RecvF, 4, 0));
  CHECK(key(pair, K::SendF, 3, 3) == key(pair, K::RecvF, 4, 0));  // both ends name the pair
  CHECK(comm_queue_text(pair, key(pair, K::RecvF, 4, 0)) == "the rank 0 <-> rank 3 communicator");
  // No partner stage (a malformed comm): a queue of its own, apart from every pair.
  CHECK(key(edge, K::RecvF, 0, 0).channel == 2);
  CHECK(key(edge, K::SendF, 7, 3).channel == 2);
}

namespace {

Schedule interleaved(std::uint32_t ranks, std::uint32_t microbatches, bool defer) {
  SynthParams p;
  p.ranks = ranks;
  p.microbatches = microbatches;
  RuntimeLowering how;
  how.defer_pp_recv = defer;
  return lower_runtime_recipe(synthesize("Interleaved1F1B", p), how);
}

bool finishes(const Schedule& s, P2pQueues q) {
  TimedOptions opt;
  opt.p2p_queues = q;
  return find_stuck(s, s.placement.stage_to_rank, opt).empty();
}

// The entry of rank `rank`'s action that is `kind` on `stage` for microbatch `mb`.
std::uint32_t entry_of(const Schedule& s, const Timeline& t, std::uint32_t rank, ActionKind kind, std::uint32_t stage,
                       std::uint32_t mb) {
  for (std::uint32_t e = t.rank_begin[rank]; e < t.rank_begin[rank + 1]; ++e) {
    const Action& a = s.ranks[rank].actions[t.step[e]];
    if (a.kind == kind && a.stage == stage && a.has_microbatch() && a.microbatch() == mb) return e;
  }
  FAIL("no such action");
  return 0;
}

}  // namespace

// pytorch/pytorch#195760's example: 4 GPUs, 8 stages, 2 microbatches, Interleaved1F1B as PyTorch's
// runtime lowers it. Rank 0 posts 4RECV_F0 (from rank 3) between its sends to rank 1, so on a
// shared queue 0SEND_F1 waits until microbatch 0 has gone round the whole ring; with a queue per
// directed pair it goes as soon as 0F1 is done.
TEST_CASE("p2p queues: a send queued behind an unrelated receive waits for it unless the pair has its own queue") {
  const Schedule s = interleaved(4, 2, false);
  const auto& place = s.placement.stage_to_rank;
  TimedOptions opt;
  opt.costs = CostModel::uniform(s.num_stages, 4, unit_costs());
  const Timeline shared = simulate_timed(s, place, opt);
  opt.p2p_queues = P2pQueues::PerDirection;
  const Timeline forward = simulate_timed(s, place, opt);
  opt.p2p_queues = P2pQueues::PerEdge;
  const Timeline edge = simulate_timed(s, place, opt);

  const auto recv = entry_of(s, shared, 0, ActionKind::RecvF, 4, 0);
  const auto send = entry_of(s, shared, 0, ActionKind::SendF, 0, 1);
  const auto f1 = entry_of(s, shared, 0, ActionKind::F, 0, 1);
  CHECK(shared.start[send] >= shared.end[recv]);    // queued behind the receive
  CHECK(forward.start[send] >= forward.end[recv]);  // both activations: still one queue
  CHECK(edge.start[send] == edge.end[f1]);          // posted once its data is there
  CHECK(edge.start[send] < edge.end[recv]);
  CHECK(edge.makespan < forward.makespan);
  CHECK(forward.makespan == shared.makespan);

  // The aggregate run takes the Timeline path for split queues, and agrees with it.
  for (P2pQueues q : {P2pQueues::PerDirection, P2pQueues::PerEdge}) {
    opt.p2p_queues = q;
    AggregateStats stats;
    const SimAnalysis got = simulate_aggregates(s, place, opt, {}, &stats);
    CHECK(stats.fell_back);
    CHECK(got.makespan == simulate_timed(s, place, opt).makespan);
  }
  opt.p2p_queues = P2pQueues::PerRank;
  AggregateStats stats;
  CHECK(simulate_aggregates(s, place, opt, {}, &stats).makespan == shared.makespan);
  CHECK_FALSE(stats.fell_back);
}

// defer_pp_recv=True moves each RECV to just before its consumer. On 4 ranks with 4 microbatches
// every rank then sends its last forward of the first round before it receives from the rank
// before it, on the activation queue: a ring of four sends. A queue per directed pair breaks it.
// With 2 microbatches the shared queue's cycle goes through a gradient, and two queues suffice.
TEST_CASE("p2p queues: a cycle through a shared queue is a deadlock only on the queues that share it") {
  const Schedule ring = interleaved(4, 4, true);
  CHECK_FALSE(finishes(ring, P2pQueues::PerRank));
  CHECK_FALSE(finishes(ring, P2pQueues::PerDirection));
  CHECK(finishes(ring, P2pQueues::PerEdge));

  const Schedule mixed = interleaved(4, 2, true);
  CHECK_FALSE(finishes(mixed, P2pQueues::PerRank));
  CHECK(finishes(mixed, P2pQueues::PerDirection));
  CHECK(finishes(mixed, P2pQueues::PerEdge));

  // Without the deferral PyTorch's order finishes on any queues.
  for (P2pQueues q : {P2pQueues::PerRank, P2pQueues::PerDirection, P2pQueues::PerEdge})
    CHECK(finishes(interleaved(4, 4, false), q));
}

// With a rank's comms split over several queues, each stuck queue is reported with the rank it
// belongs to and the step of its head, as the deadlock rule follows them.
TEST_CASE("p2p queues: every stuck queue is named with its own rank and head") {
  const Schedule ring = interleaved(4, 4, true);
  TimedOptions opt;
  opt.p2p_queues = P2pQueues::PerDirection;
  const auto stuck = find_stuck(ring, ring.placement.stage_to_rank, opt);
  REQUIRE(stuck.size() >= 4);
  for (const auto& st : stuck) {
    INFO("rank " << st.rank << " step " << st.step);
    REQUIRE(st.rank < ring.rank_count());
    REQUIRE(st.step < ring.ranks[st.rank].actions.size());
  }
  // Each rank's forward queue is stuck at a SEND_F (the ring), seen from every rank.
  for (std::uint32_t r = 0; r < 4; ++r)
    CHECK(std::any_of(stuck.begin(), stuck.end(), [&](const auto& st) {
      return st.rank == r && ring.ranks[r].actions[st.step].kind == ActionKind::SendF;
    }));
}
