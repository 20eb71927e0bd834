// Every call of the MPI process group, on real processes: run under a launcher
// (`mpirun -np 4 group_check`; ctest does), it joins the job through the MPI module exactly as
// `ppsched run` does (join_launched_group) and checks each call's results against what every
// process can work out for itself. Each process prints "process R: ok: ..." per check and
// "process R: FAIL: ..." per failure; the exit code is 0 only when every check passed.
//
// Figures are printed as "info:" lines, not checked: how long joining took (MPI_Init and the
// gathering of places; from the launch too, given PPSCHED_CHECK_LAUNCHED_AT=$(date +%s.%N)),
// and the round trip of an 8-byte message between processes 0 and 1.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "run/mpi_loader.hpp"
#include "run/process_group.hpp"

using ppsched::run::Bytes;
using ppsched::run::GroupError;
using ppsched::run::ProcessGroup;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kTimeout_s = 20;
int me = -1;
int failures = 0;

void report(bool ok, const std::string& what) {
  std::printf("process %d: %s: %s\n", me, ok ? "ok" : "FAIL", what.c_str());
  std::fflush(stdout);
  if (!ok) ++failures;
}

// Runs `body`, which must throw GroupError whose message contains every one of `parts`.
void expect_error(const std::string& what, const std::function<void()>& body, const std::vector<std::string>& parts) {
  try {
    body();
    report(false, what + ": no GroupError");
  } catch (const GroupError& e) {
    const std::string m = e.what();
    const bool all =
        std::all_of(parts.begin(), parts.end(), [&](const std::string& p) { return m.find(p) != std::string::npos; });
    report(all, what + " (\"" + m + "\")");
  }
}

// The bytes process `from` sends in message `seq`: recognisable, and different per message.
Bytes payload(int from, int seq, std::size_t size) {
  Bytes b(size);
  for (std::size_t i = 0; i < size; ++i) b[i] = static_cast<std::uint8_t>(from * 31 + seq * 7 + i);
  return b;
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void check_identity(const ProcessGroup& g, int launched) {
  const int n = g.size();
  report(n == launched, "size " + std::to_string(n) + " is the launcher's " + std::to_string(launched));
  report(g.rank() >= 0 && g.rank() < n, "rank " + std::to_string(g.rank()) + " is within 0.." + std::to_string(n - 1));
  if (const char* r = std::getenv("OMPI_COMM_WORLD_RANK"))
    report(std::to_string(g.rank()) == r, std::string("rank is OMPI_COMM_WORLD_RANK ") + r);
  const std::string impl = g.implementation();
  report(!impl.empty() && impl.find('\n') == std::string::npos &&
             (!std::getenv("OMPI_COMM_WORLD_SIZE") || impl.rfind("Open MPI v", 0) == 0),
         "implementation \"" + impl + "\"");
}

// Every process on this one machine: one node, local ranks in rank order, this host's name.
void check_places(const ProcessGroup& g) {
  const auto& places = g.places();
  const int n = g.size();
  bool ok = static_cast<int>(places.size()) == n;
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  for (int p = 0; ok && p < n; ++p) {
    const auto& pl = places[static_cast<std::size_t>(p)];
    ok = pl.node == 0 && pl.local_rank == p && pl.local_size == n && pl.host == host;
    if (!ok)
      report(false, "place of process " + std::to_string(p) + ": host " + pl.host + ", node " +
                        std::to_string(pl.node) + ", local rank " + std::to_string(pl.local_rank) + " of " +
                        std::to_string(pl.local_size));
  }
  report(ok, "places: " + std::to_string(n) + " processes on node 0 (" + host + "), local ranks 0.." +
                 std::to_string(n - 1));
}

void check_collectives(ProcessGroup& g) {
  const int n = g.size();
  g.barrier(kTimeout_s);
  report(true, "barrier");

  // From process 1, of a size only it knows; the others start with something else.
  const int root = 1 % n;
  Bytes b = g.rank() == root ? payload(root, 0, 1000 + 7) : payload(g.rank(), 9, 3);
  g.broadcast(b, root, kTimeout_s);
  report(b == payload(root, 0, 1007), "broadcast of 1007 bytes from process " + std::to_string(root));
  Bytes empty = g.rank() == 0 ? Bytes{} : payload(g.rank(), 1, 5);
  g.broadcast(empty, 0, kTimeout_s);
  report(empty.empty(), "broadcast of 0 bytes from process 0");

  // Process p gives 3p bytes: process 0 gives none.
  const auto all = g.all_gather(payload(g.rank(), 2, 3 * static_cast<std::size_t>(g.rank())), kTimeout_s);
  bool gathered = static_cast<int>(all.size()) == n;
  for (int p = 0; gathered && p < n; ++p)
    gathered = all[static_cast<std::size_t>(p)] == payload(p, 2, 3 * static_cast<std::size_t>(p));
  report(gathered, "all_gather of 0, 3, 6... bytes");
  const auto none = g.all_gather({}, kTimeout_s);
  report(static_cast<int>(none.size()) == n &&
             std::all_of(none.begin(), none.end(), [](const Bytes& x) { return x.empty(); }),
         "all_gather of nothing from everyone");

  const double top = g.all_max(1.5 * g.rank() - 2, kTimeout_s);
  report(top == 1.5 * (n - 1) - 2, "all_max " + std::to_string(top));
  report(g.all_max(-1.0 - g.rank(), kTimeout_s) == -1.0, "all_max of negative values");
}

// Each process sends to the next and receives from the previous one.
void check_ring(ProcessGroup& g) {
  const int n = g.size();
  const int next = (g.rank() + 1) % n, prev = (g.rank() + n - 1) % n;
  // Tag 9 first, then three messages on tag 7 and one of 1 MiB (past Open MPI's eager limit)
  // on tag 8. The receiver takes tag 7 first: tags match independently, and on one tag the
  // messages come in the order they were sent.
  g.send(next, 9, payload(g.rank(), 90, 16));
  for (int seq = 0; seq < 3; ++seq) g.send(next, 7, payload(g.rank(), seq, 64));
  g.send(next, 8, payload(g.rank(), 80, 1 << 20));
  bool in_order = true;
  for (int seq = 0; seq < 3; ++seq) {
    Bytes got(64);
    g.recv(prev, 7, got, kTimeout_s);
    in_order = in_order && got == payload(prev, seq, 64);
  }
  report(in_order, "three messages on tag 7 from process " + std::to_string(prev) + ", in the order sent");
  Bytes big(1 << 20);
  g.recv(prev, 8, big, kTimeout_s);
  report(big == payload(prev, 80, 1 << 20), "1 MiB on tag 8 from process " + std::to_string(prev));
  Bytes first(16);
  g.recv(prev, 9, first, kTimeout_s);
  report(first == payload(prev, 90, 16), "the message on tag 9, sent first, received last");

  // Wrong size: 16 bytes where 8 are expected. The message is consumed, so the next one on the
  // same tag is received normally.
  g.send(next, 11, payload(g.rank(), 110, 16));
  g.send(next, 11, payload(g.rank(), 111, 8));
  Bytes eight(8);
  expect_error("recv of 16 bytes into 8", [&] { g.recv(prev, 11, eight, kTimeout_s); },
               {"process " + std::to_string(g.rank()) + ": message from process " + std::to_string(prev) + " (tag 11)",
                "expected 8 bytes, got 16"});
  g.recv(prev, 11, eight, kTimeout_s);
  report(eight == payload(prev, 111, 8), "the message after the wrong-sized one");

  // Nobody sends on tag 200: the wait ends at its timeout, naming the peer and the tag.
  const auto t = Clock::now();
  expect_error("recv that nobody sends", [&] { g.recv(prev, 200, eight, 0.2); },
               {"process " + std::to_string(g.rank()) + ": no message from process " + std::to_string(prev) +
                " (tag 200) within 0.2 s"});
  const double waited = seconds_since(t);
  report(waited >= 0.19 && waited < 1.0, "the unanswered recv gave up after " + std::to_string(waited) + " s");

  expect_error("send to a process that does not exist", [&] { g.send(n, 0, eight); },
               {"send to process " + std::to_string(n) + ": there is no such process"});
  expect_error("a tag past 255", [&] { g.send(next, 256, eight); }, {"tag 256 is outside 0..255"});
  g.barrier(kTimeout_s);
}

// Round trips of 8 bytes between processes 0 and 1, while the others wait at the barrier.
void measure_latency(ProcessGroup& g) {
  if (g.size() < 2) return;
  constexpr int kWarmup = 200, kTrips = 2000;
  Bytes msg(8, 1);
  double seconds = 0;
  if (g.rank() < 2) {
    const int other = 1 - g.rank();
    auto t = Clock::now();
    for (int i = 0; i < kWarmup + kTrips; ++i) {
      if (i == kWarmup) t = Clock::now();
      if (g.rank() == 0) {
        g.send(other, 3, msg);
        g.recv(other, 3, msg, kTimeout_s);
      } else {
        g.recv(other, 3, msg, kTimeout_s);
        g.send(other, 3, msg);
      }
    }
    seconds = seconds_since(t);
  }
  if (g.rank() == 0)
    std::printf("process 0: info: round trip of 8 bytes between processes 0 and 1: %.1f us (mean of %d)\n",
                1e6 * seconds / kTrips, kTrips);
  g.barrier(kTimeout_s);
}

}  // namespace

int main() {
  const int launched = ppsched::run::launcher_world_size();
  if (launched == 0) {
    std::fprintf(stderr, "group_check: not started by a launcher; run it as mpirun -np 4 %s\n", "group_check");
    return 2;
  }
  const auto t0 = Clock::now();
  std::unique_ptr<ProcessGroup> group;
  try {
    group = ppsched::run::join_launched_group();
  } catch (const GroupError& e) {
    std::fprintf(stderr, "group_check: %s\n", e.what());
    return 1;
  }
  me = group->rank();
  std::printf("process %d: info: joined in %.0f ms (join_launched_group: MPI_Init and the places)\n", me,
              1e3 * seconds_since(t0));
  // PPSCHED_CHECK_LAUNCHED_AT=$(date +%s.%N) before mpirun: the time from the launch to here.
  if (const char* at = std::getenv("PPSCHED_CHECK_LAUNCHED_AT")) {
    const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    std::printf("process %d: info: %.0f ms from the launch to joined\n", me, 1e3 * (now - std::atof(at)));
  }
  try {
    check_identity(*group, launched);
    check_places(*group);
    check_collectives(*group);
    check_ring(*group);
    measure_latency(*group);
    // Everyone's failures, so that every process's exit code tells the whole story.
    const double worst = group->all_max(failures, kTimeout_s);
    report(worst == 0, "every process passed every check");
    if (worst != 0) failures = std::max(failures, 1);
  } catch (const std::exception& e) {
    report(false, std::string("unexpected error: ") + e.what());
    group->abort(1);
  }
  return failures == 0 ? 0 : 1;
}
