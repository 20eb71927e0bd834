// The send mode's flag syntax, its names and the one rule of which SEND is eager.
#include "sim/send_mode.hpp"

#include "support/catch.hpp"

using namespace ppsched;

TEST_CASE("send modes: rendezvous, eager and eager:BYTES are read, and nothing else") {
  CHECK(parse_send_mode("rendezvous") == SendMode{});
  CHECK(parse_send_mode("eager") == SendMode{SendMode::Kind::Eager});
  const auto nccl = parse_send_mode("eager:4194304");
  REQUIRE(nccl);
  CHECK(nccl->eager());
  CHECK(nccl->eager_max_bytes == kNcclDefaultBuffSize);
  CHECK(parse_send_mode("eager:0")->eager_max_bytes == 0);
  for (const char* bad :
       {"", "foo", "Eager", "rendezvous:1", "eager:", "eager:abc", "eager:-1", "eager:+4", "eager:4MiB", "eager:1e6",
        "eager: 4", "eager:4 ", "eagerly", "eager:99999999999999999999999"}) {
    INFO("'" << bad << "'");
    CHECK_FALSE(parse_send_mode(bad));
  }
}

TEST_CASE("send modes: names round-trip, and only eager is summarised") {
  for (const char* name : {"rendezvous", "eager", "eager:0", "eager:4194304"}) {
    INFO(name);
    CHECK(send_mode_name(*parse_send_mode(name)) == name);
  }
  CHECK(send_mode_summary(SendMode{}).empty());
  CHECK(send_mode_summary(*parse_send_mode("eager")) == "eager sends (every send completes without its receive)");
  CHECK(send_mode_summary(*parse_send_mode("eager:4194304")) ==
        "eager sends up to 4194304 bytes (larger ones wait for their receive)");
}

TEST_CASE("send modes: a send is eager when its message is at most the threshold") {
  CommModel comm;
  comm.stages.resize(2);
  comm.stages[0].activation_bytes = 4194304;
  comm.stages[0].gradient_bytes = 4194305;
  comm.stages[1].activation_bytes = 1;
  const SendMode nccl = *parse_send_mode("eager:4194304");
  CHECK(send_completes_eagerly(nccl, comm, 0, true));         // exactly the buffer: fits
  CHECK_FALSE(send_completes_eagerly(nccl, comm, 0, false));  // one byte over
  CHECK(send_completes_eagerly(nccl, comm, 1, true));
  CHECK(send_completes_eagerly(nccl, comm, 7, true));  // no size known: 0 bytes, as for transfer times
  CHECK(nccl.needs_sizes());
  const SendMode all{SendMode::Kind::Eager};
  CHECK_FALSE(all.needs_sizes());
  CHECK(send_completes_eagerly(all, comm, 0, false));
  CHECK_FALSE(send_completes_eagerly(SendMode{}, comm, 1, true));  // rendezvous: never
}
