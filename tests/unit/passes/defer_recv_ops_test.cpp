// defer_recv_ops against PyTorch's `_defer_recv_ops` at cff2ecc8: every expected output here is
// what PyTorch's function returned for the same input (run through the pytorch-oracle harness).
#include <string>

#include "passes/passes.hpp"
#include "support/catch.hpp"
#include "support/schedule_text.hpp"

using namespace ppsched;
using namespace ppsched::test;

namespace {

std::string deferred(std::string_view csv) { return csv_text(defer_recv_ops(schedule_from_csv(csv), {0, 1})); }

}  // namespace

TEST_CASE("defer_recv_ops: a RECV waits for its consumer, but the lower rank posts before it sends to its peer") {
  // Rank 0's RECV_B0 moves past 0F1 to just before 0SEND_F1 (rank 0 < rank 1: it must be posted
  // before rank 0 sends to rank 1 again); rank 1's RECV_F1 moves to just before 1F1.
  CHECK(deferred("0F0,0SEND_F0,0RECV_B0,0F1,0SEND_F1,0RECV_B1,0B0,0B1\n"
                 "1RECV_F0,1RECV_F1,1F0,1B0,1SEND_B0,1F1,1B1,1SEND_B1\n") ==
        "0F0,0SEND_F0,0F1,0RECV_B0,0SEND_F1,0B0,0RECV_B1,0B1\n"
        "1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1\n");
}

TEST_CASE("defer_recv_ops: a RECV held twice is placed once, where it was first held") {
  CHECK(deferred("0F0,0SEND_F0,0RECV_B0,0RECV_B0,0B0\n1RECV_F0,1F0,1B0,1SEND_B0\n") ==
        "0F0,0SEND_F0,0RECV_B0,0B0\n1RECV_F0,1F0,1B0,1SEND_B0\n");
}

TEST_CASE("defer_recv_ops: an OVERLAP_F_B takes the RECVs of its sub-actions") {
  CHECK(deferred("0F0,0SEND_F0,0RECV_B0,(0F1;0B0)OVERLAP_F_B\n1RECV_F0,1F0,1B0,1SEND_B0\n") ==
        "0F0,0SEND_F0,0RECV_B0,(0F1;0B0)OVERLAP_F_B\n1RECV_F0,1F0,1B0,1SEND_B0\n");
}

TEST_CASE("defer_recv_ops: a RECV nothing consumes is PyTorch's assertion, word for word") {
  CHECK_THROWS_WITH(deferred("0RECV_B0,0F0,0SEND_F0,0B0\n1RECV_F0,1F0,1SEND_B0,1RECV_F0\n"),
                    "Malformed input schedule on rank 1: leftover RECV ops with no consumer found: [1RECV_F0]. "
                    "Every RECV must be consumed by a downstream compute op.");
}
