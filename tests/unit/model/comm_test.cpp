#include "model/comm.hpp"

#include "support/catch.hpp"

using namespace ppsched;

TEST_CASE(
    "a transfer takes its link's latency plus bytes over bandwidth, and nothing on one rank or without a topology") {
  CommModel m;
  CHECK(m.transfer_time(0, true, 0, 1) == 0);  // no topology: free
  Topology t;
  t.node_of_rank = {0, 0, 1, 1};
  t.slice_of_rank = {0, 0, 0, 1};
  t.intra_node = {1, 1000};
  t.inter_node = {5, 100};
  t.inter_slice = {30, 0};  // infinite bandwidth
  m.topology = t;
  CHECK(&t.link(0, 1) == &t.intra_node);
  CHECK(&t.link(1, 2) == &t.inter_node);
  CHECK(&t.link(2, 3) == &t.inter_slice);
  CHECK(m.transfer_time(0, true, 0, 1) == 1);  // no stage spec: latency only
  StageSpec s;
  s.activation_bytes = 2000;
  s.gradient_bytes = 500;
  m.stages = {s};
  CHECK(m.transfer_time(0, true, 0, 1) == 3);
  CHECK(m.transfer_time(0, false, 1, 2) == 10);
  CHECK(m.transfer_time(0, true, 2, 3) == 30);
  CHECK(m.transfer_time(0, true, 2, 2) == 0);
  CHECK(m.transfer_time(5, true, 1, 2) == 5);  // a stage the spec does not have: latency only
}
