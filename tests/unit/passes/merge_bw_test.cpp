#include "passes/passes.hpp"
#include "support/corpus.hpp"
#include "support/schedule_text.hpp"

using namespace ppsched;
using namespace ppsched::test;

namespace {

std::string merged(std::string_view csv, bool lenient = false) {
  return csv_text(merge_bw(schedule_from_csv(csv, lenient)));
}

}  // namespace

TEST_CASE("merge_bw: PyTorch's own test case") {
  CHECK(merged("0F0,0F1,0F2,0I0,0I1,0W0,0I2,0W2,0W1\n") == "0F0,0F1,0F2,0I0,0I1,0W0,0B2,0W1\n");
}

TEST_CASE("merge_bw: idle steps are dropped and do not separate I from its W") {
  CHECK(merged("0I0,,,0W0,\n,1I0\n") == "0B0\n1I0\n");
}

TEST_CASE("merge_bw: only the same stage and microbatch, in the order I then W") {
  CHECK(merged("0I0,0W1,0W0\n") == "0I0,0W1,0W0\n");
  CHECK(merged("0I0,1W0\n") == "0I0,1W0\n");
  CHECK(merged("0W0,0I0\n") == "0W0,0I0\n");
  CHECK(merged("0I0,0W0,0W0\n") == "0B0,0W0\n");
}

TEST_CASE("merge_bw: containers of kind I and W merge as PyTorch's stage -1") {
  CHECK(merged("(0I0)I,(0W0)W\n", /*lenient=*/true) == "-1B\n");
}

TEST_CASE("merge_bw then add_send_recv: PyTorch's zb1p artifact") {
  // test_schedule.py: per rank _merge_bw, then _add_send_recv with stage % 2, 4 stages.
  using ppsched::test::read_file;
  auto dir = ppsched::test::corpus_dir() / "upstream-artifacts";
  Schedule compute = schedule_from_csv(read_file(dir / "zb1p_2rank_2stagep_compute.csv"));
  Schedule comms = add_send_recv(merge_bw(compute), {0, 1, 0, 1}, 4);
  CHECK(csv_text(comms) == read_file(dir / "zb1p_2rank_2stagep_comms.csv"));
}
