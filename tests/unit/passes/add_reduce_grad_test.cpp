#include "passes/passes.hpp"
#include "support/schedule_text.hpp"

using namespace ppsched;
using namespace ppsched::test;

TEST_CASE("add_reduce_grad: PyTorch's own test cases") {
  CHECK(csv_text(add_reduce_grad(schedule_from_csv("0F0,0F1,,0B0,0B1\n"), 2)) == "0F0,0F1,0B0,0B1,0REDUCE_GRAD\n");
  CHECK(csv_text(add_reduce_grad(schedule_from_csv("0F0,0F1,1F0,1F1,1B0,1B1,0B0,0B1\n"), 2)) ==
        "0F0,0F1,1F0,1F1,1B0,1B1,1REDUCE_GRAD,0B0,0B1,0REDUCE_GRAD\n");
}

TEST_CASE("add_reduce_grad: W counts, I does not, and OVERLAP_F_B sub-actions count") {
  CHECK(csv_text(add_reduce_grad(schedule_from_csv("0F0,0F1,0I0,0W0,0I1,0W1\n"), 2)) ==
        "0F0,0F1,0I0,0W0,0I1,0W1,0REDUCE_GRAD\n");
  CHECK(csv_text(add_reduce_grad(schedule_from_csv("0F0,(1F0;0B0)OVERLAP_F_B,1B0\n"), 1)) ==
        "0F0,(1F0;0B0)OVERLAP_F_B,0REDUCE_GRAD,1B0,1REDUCE_GRAD\n");
}
