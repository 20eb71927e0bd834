// What a multi-process device says when a wait gives up: the first unfinished launch in launch
// order, and the message for a deadline or an NCCL error.
#include <set>
#include <vector>

#include "run/overdue.hpp"
#include "support/catch.hpp"

using namespace ppsched::run;

TEST_CASE("seconds are written as a person writes them") {
  CHECK(seconds_text(60) == "60 s");
  CHECK(seconds_text(0.5) == "0.5 s");
  CHECK(seconds_text(0.125) == "0.125 s");
  CHECK(seconds_text(0) == "0 s");
  CHECK(seconds_text(1e-7) == "0 s");  // below a microsecond: a deadline nobody sets
}

TEST_CASE("the first unfinished launch is the earliest in launch order, not the lowest span") {
  const std::vector<LaunchRef> launched = {{4, 2, "2F0"}, {0, 2, "3RECV_F0"}, {7, 2, "2SEND_F0"}, {2, 2, "2F1"}};
  const std::set<std::uint32_t> finished = {4, 2};  // a later launch on another stream finished
  const LaunchRef* stuck = first_unfinished(std::span<const LaunchRef>(launched),
                                            [&](std::uint32_t span) { return finished.count(span) > 0; });
  REQUIRE(stuck);
  CHECK(stuck->label == "3RECV_F0");
  CHECK(launch_text(stuck, "unused") == "rank 2: '3RECV_F0'");

  const LaunchRef* none = first_unfinished(std::span<const LaunchRef>(launched), [](std::uint32_t) { return true; });
  CHECK(none == nullptr);
  CHECK(launch_text(none, "process 1: the iteration") == "process 1: the iteration");
  CHECK(first_unfinished(std::span<const LaunchRef>(), [](std::uint32_t) { return false; }) == nullptr);
}

TEST_CASE("a wait that gives up says what was stuck, and the deadline or NCCL's error") {
  CHECK(overdue_message("rank 2: '3RECV_F5'", 60, "") ==
        "rank 2: '3RECV_F5' had not finished after 60 s: a peer died or hangs");
  CHECK(overdue_message("the ping-pong of processes 0 and 1", 2.5, "") ==
        "the ping-pong of processes 0 and 1 had not finished after 2.5 s: a peer died or hangs");
  CHECK(overdue_message("rank 2: '3RECV_F5'", 60,
                        "ncclCommGetAsyncError reported ncclRemoteError: remote process exited") ==
        "rank 2: '3RECV_F5' had not finished when ncclCommGetAsyncError reported ncclRemoteError: remote process "
        "exited");
}
