// Waiting on MPI without blocking for ever: every wait of the MPI group polls a nonblocking call
// until it completes or a deadline passes, so a process that died or hangs turns into a
// GroupError on the others instead of a job stuck until the batch system kills it.
//
// The polling is meant for oversubscribed cores (several processes per core, as in tests): it
// spins briefly, which keeps latency low when the peer runs on another core, then gives the core
// away (sched_yield, then sleeps of a few tens of microseconds) so a peer sharing it can run.
#pragma once

#include <mpi.h>

#include <chrono>
#include <string>

namespace ppsched::run::mpi {

using Clock = std::chrono::steady_clock;

/// `timeout_s` seconds from now (a negative or NaN timeout is an immediate deadline).
Clock::time_point deadline_in(double timeout_s);

/// "5", "0.2": a timeout as a message shows it.
std::string seconds_text(double timeout_s);

/// MPI_Error_string's text for an MPI error code.
std::string error_text(int code);

/// Polls MPI_Test on `request` until it completes (`done` true, `status` filled when not null)
/// or `deadline` passes (`done` false, the request still active). Returns MPI_SUCCESS, or the
/// error code of a failed test; the caller words the error, since only it knows what it waited for.
int test_until(MPI_Request& request, Clock::time_point deadline, MPI_Status* status, bool& done);

/// Polls MPI_Improbe for a message from `source` under `tag` until one is matched (`found` true,
/// `message` and `status` filled) or `deadline` passes (`found` false: nothing was matched, so
/// nothing is left to cancel). Returns as test_until does.
int probe_until(int source, int tag, MPI_Comm comm, Clock::time_point deadline, MPI_Message& message,
                MPI_Status& status, bool& found);

}  // namespace ppsched::run::mpi
