// The communicator queues read off a run's NCCL streams (trace/measured_queues.hpp): three ranks in
// a chain, one microbatch, the middle rank talking to both neighbours, its four transfers put on
// streams the way each model would.
#include "trace/measured_queues.hpp"

#include "support/catch.hpp"

using namespace ppsched;

namespace {

struct Streams {
  std::int64_t r0_send_f, r0_recv_b;                        // rank 0 (stage 0)
  std::int64_t r1_recv_f, r1_send_f, r1_recv_b, r1_send_b;  // rank 1 (stage 1)
  std::int64_t r2_recv_f, r2_send_b;                        // rank 2 (stage 2)
};

MeasuredAction act(ActionKind k, std::uint16_t stage, std::int64_t stream = -1) {
  MeasuredAction a;
  a.action = Action::make(k, stage, 0);
  a.has_gpu = true;
  a.gpu_stream = stream < 0 ? 7 : stream;
  return a;
}

TraceAnalysis chain(const Streams& s) {
  using K = ActionKind;
  TraceAnalysis a;
  a.ranks.resize(3);
  a.ranks[0].actions = {act(K::F, 0), act(K::SendF, 0, s.r0_send_f), act(K::RecvB, 0, s.r0_recv_b), act(K::B, 0)};
  a.ranks[1].actions = {act(K::RecvF, 1, s.r1_recv_f), act(K::F, 1), act(K::SendF, 1, s.r1_send_f),
                        act(K::RecvB, 1, s.r1_recv_b), act(K::B, 1), act(K::SendB, 1, s.r1_send_b)};
  a.ranks[2].actions = {act(K::RecvF, 2, s.r2_recv_f), act(K::F, 2), act(K::B, 2), act(K::SendB, 2, s.r2_send_b)};
  for (std::uint32_t r = 0; r < 3; ++r) {
    a.ranks[r].rank = r;
    a.executed.ranks.emplace_back();
    for (const MeasuredAction& x : a.ranks[r].actions) a.executed.ranks.back().actions.push_back(x.action);
  }
  return a;
}

}  // namespace

TEST_CASE("measured queues: the coarsest model whose queues are the streams") {
  struct Case {
    const char* layout;
    Streams streams;
    P2pQueues want;
    std::size_t most_streams;  // on one rank
    const char* evidence;
  };
  const Case cases[] = {
      {"one stream per rank", {20, 20, 24, 24, 24, 24, 30, 30}, P2pQueues::PerRank, 1, "all of a rank's"},
      {"activations and gradients apart",
       {20, 21, 24, 24, 28, 28, 30, 31},
       P2pQueues::PerDirection,
       2,
       "one for activations"},
      // Rank 1: RECV_F from 0 and SEND_B to 0 on one stream, SEND_F to 2 and RECV_B from 2 on another.
      {"one per rank pair, as ProcessGroupNCCL",
       {20, 20, 24, 28, 28, 24, 30, 30},
       P2pQueues::PerPair,
       2,
       "one per rank pair"},
      {"one per directed pair", {20, 21, 24, 28, 29, 25, 30, 31}, P2pQueues::PerEdge, 4, "one per directed"},
  };
  for (const Case& c : cases) {
    INFO(c.layout);
    const MeasuredQueues q = measured_p2p_queues(chain(c.streams));
    REQUIRE(q.queues);
    CHECK(*q.queues == c.want);
    CHECK(q.streams == c.most_streams);
    CHECK(q.evidence.find(c.evidence) != std::string::npos);
  }
}

TEST_CASE("measured queues: none where the streams cannot tell") {
  SECTION("streams no model explains: none, and why") {
    // Rank 1's stream 28 holds its SEND_F to rank 2 and its SEND_B to rank 0.
    const MeasuredQueues q = measured_p2p_queues(chain({20, 20, 24, 28, 24, 28, 30, 30}));
    CHECK_FALSE(q.queues);
    CHECK(q.evidence.find("no communicator model") != std::string::npos);
  }
  SECTION("no SEND or RECV kernel") {
    TraceAnalysis a = chain({20, 20, 24, 24, 24, 24, 30, 30});
    for (MeasuredRank& r : a.ranks)
      for (MeasuredAction& x : r.actions)
        if (is_send_recv(x.action.kind)) x.has_gpu = false;
    const MeasuredQueues q = measured_p2p_queues(a);
    CHECK_FALSE(q.queues);
    CHECK(q.evidence == "no SEND or RECV kernel in the trace");
  }
}
