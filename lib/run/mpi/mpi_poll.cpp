#include "mpi_poll.hpp"

#include <sched.h>
#include <time.h>

#include <cmath>
#include <cstdio>
#include <string>

namespace ppsched::run::mpi {

namespace {

// How a polling loop spends the time between two tests. The first few hundred tests run back
// to back: a peer on another core answers within microseconds, and yielding there would add a
// scheduler round trip to every message. After that the peer is probably waiting for this very
// core (more processes than cores), so the loop yields it, then sleeps: a sleep of 20 us costs
// little latency and leaves the core to the peer almost entirely.
class Backoff {
 public:
  void pause() {
    ++polls_;
    if (polls_ <= kSpins) return;
    if (polls_ <= kSpins + kYields) {
      sched_yield();
      return;
    }
    const timespec nap{0, kSleepNs};
    nanosleep(&nap, nullptr);
  }

 private:
  static constexpr long kSpins = 300;
  static constexpr long kYields = 200;
  static constexpr long kSleepNs = 20'000;
  long polls_ = 0;
};

}  // namespace

Clock::time_point deadline_in(double timeout_s) {
  if (!(timeout_s > 0)) return Clock::now();
  // Far beyond any run, and short of the clock's overflow.
  const double capped = std::fmin(timeout_s, 1e9);
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(capped));
}

std::string seconds_text(double timeout_s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", timeout_s);
  return buf;
}

std::string error_text(int code) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(buf, static_cast<std::size_t>(len));
}

int test_until(MPI_Request& request, Clock::time_point deadline, MPI_Status* status, bool& done) {
  Backoff backoff;
  for (;;) {
    int flag = 0;
    const int rc = MPI_Test(&request, &flag, status ? status : MPI_STATUS_IGNORE);
    done = flag != 0;
    // The deadline is checked after the test, so even a zero timeout tests once.
    if (rc != MPI_SUCCESS || done || Clock::now() >= deadline) return rc;
    backoff.pause();
  }
}

int probe_until(int source, int tag, MPI_Comm comm, Clock::time_point deadline, MPI_Message& message,
                MPI_Status& status, bool& found) {
  Backoff backoff;
  for (;;) {
    int flag = 0;
    const int rc = MPI_Improbe(source, tag, comm, &flag, &message, &status);
    found = flag != 0;
    if (rc != MPI_SUCCESS || found || Clock::now() >= deadline) return rc;
    backoff.pause();
  }
}

}  // namespace ppsched::run::mpi
