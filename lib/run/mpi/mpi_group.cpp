// The MPI implementation of ProcessGroup, and ppsched_make_mpi_group, the one symbol this
// module exports (run/mpi_module.hpp).
//
// Only MPI's C API is used, on a private duplicate of MPI_COMM_WORLD whose errors return (they
// become GroupError) instead of aborting the job. MPI is joined with MPI_THREAD_FUNNELED: every
// call must come from the thread that created the group.
//
// No call blocks inside MPI: each starts the nonblocking form and polls it against its deadline
// (mpi_poll.hpp). When a collective passes its deadline it cannot be cancelled, so its buffers
// are kept until the process ends and the group counts as broken: its destructor then leaves
// MPI alone rather than wait in MPI_Finalize for processes that may never come.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <concepts>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "mpi_places.hpp"
#include "mpi_poll.hpp"
#include "run/mpi_module.hpp"
#include "run/process_group.hpp"

namespace ppsched::run::mpi {

namespace {

// The start-up all-gather of every process's place. MPI_Init has already brought every process
// together, so this only bounds the wait when one dies in between.
constexpr double kStartupTimeout_s = 60;
// How long the destructor waits for this process's sends to be received. After a final
// barrier every message has arrived; without one, a peer may still be about to receive, so this
// is seconds rather than milliseconds, and bounds the wait for a peer that is gone.
constexpr double kSendDrain_s = 5;
constexpr int kMaxTag = 255;

// "Open MPI v4.1.4" from "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, ...", and
// "MPICH Version: 4.0.2" from MPICH's "MPICH Version:\t4.0.2\nMPICH Release date: ...".
std::string library_text() {
  char buf[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  std::string text;
  if (MPI_Get_library_version(buf, &len) == MPI_SUCCESS) {
    const std::string all(buf, static_cast<std::size_t>(len));
    const std::string first = all.substr(0, all.find_first_of("\n,"));
    for (char c : first) {
      const bool blank = c == ' ' || c == '\t' || c == '\r';
      if (!blank)
        text += c;
      else if (!text.empty() && text.back() != ' ')
        text += ' ';
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
  }
  if (text.empty()) {
    int version = 0, subversion = 0;
    MPI_Get_version(&version, &subversion);
    text = "MPI " + std::to_string(version) + "." + std::to_string(subversion);
  }
  return text;
}

// A send in flight: its bytes stay here until MPI says they are no longer needed.
struct PendingSend {
  Bytes bytes;
  int peer = 0;
  int tag = 0;
};

class MpiGroup final : public ProcessGroup {
 public:
  MpiGroup() {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (finalized) throw GroupError("MPI was already finalized in this process, and cannot be started again");
    if (!initialized) {
      int provided = 0;
      const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
      if (rc != MPI_SUCCESS) throw GroupError("MPI_Init_thread: " + error_text(rc));
      owns_mpi_ = true;
    }
    // From here a failure leaves MPI initialized: the caller reports it and ends the process,
    // and an MPI_Finalize here could wait for processes that are not coming.
    const int rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    if (rc != MPI_SUCCESS) throw GroupError("MPI_Comm_dup: " + error_text(rc));
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);

    const LocalPlace mine = find_local_place(comm_, deadline_in(kStartupTimeout_s));
    std::vector<LocalPlace> all;
    for (const Bytes& b : all_gather(encode_place(mine), kStartupTimeout_s)) all.push_back(decode_place(b));
    places_ = number_nodes(all);
    implementation_ = library_text();
  }

  ~MpiGroup() override {
    drain_sends();
    // Buffers MPI may still touch stay for the rest of the process.
    if (!abandoned_.empty()) (void)new std::vector<std::shared_ptr<void>>(std::move(abandoned_));
    if (broken_) return;
    MPI_Comm_free(&comm_);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owns_mpi_ && !finalized) MPI_Finalize();
  }

  MpiGroup(const MpiGroup&) = delete;
  MpiGroup& operator=(const MpiGroup&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::vector<ProcessPlace>& places() const override { return places_; }
  std::string implementation() const override { return implementation_; }

  void barrier(double timeout_s) override {
    reap_sends();
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier");
    finish(
        request, nullptr, [] { return std::string("barrier"); }, deadline_in(timeout_s), timeout_s);
  }

  void broadcast(Bytes& bytes, int root, double timeout_s) override {
    check_process(root, "broadcast from");
    reap_sends();
    const auto what = [&] { return "broadcast from process " + std::to_string(root); };
    const auto deadline = deadline_in(timeout_s);
    // MPI's buffers, not the caller's: if the broadcast is abandoned, MPI may still use them.
    struct Buffers {
      std::uint64_t size = 0;
      Bytes data;
    };
    auto buf = std::make_shared<Buffers>();
    if (rank_ == root) buf->size = bytes.size();
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Ibcast(&buf->size, 1, MPI_UINT64_T, root, comm_, &request),
          [&] { return "MPI_Ibcast (size): " + what(); });
    finish(request, buf, what, deadline, timeout_s);
    const int count = to_count(buf->size, what);
    if (rank_ == root)
      buf->data = bytes;
    else
      buf->data.resize(buf->size);
    if (count > 0) {
      check(MPI_Ibcast(buf->data.data(), count, MPI_BYTE, root, comm_, &request),
            [&] { return "MPI_Ibcast: " + what(); });
      finish(request, buf, what, deadline, timeout_s);
    }
    if (rank_ != root) bytes = std::move(buf->data);
  }

  std::vector<Bytes> all_gather(std::span<const std::uint8_t> bytes, double timeout_s) override {
    reap_sends();
    const auto all_gather_text = [] { return std::string("all_gather"); };
    const auto deadline = deadline_in(timeout_s);
    struct Buffers {
      std::uint64_t mine = 0;
      std::vector<std::uint64_t> sizes;
      Bytes send, all;
      std::vector<int> counts, displs;
    };
    auto buf = std::make_shared<Buffers>();
    buf->mine = bytes.size();
    buf->sizes.resize(static_cast<std::size_t>(size_));
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Iallgather(&buf->mine, 1, MPI_UINT64_T, buf->sizes.data(), 1, MPI_UINT64_T, comm_, &request),
          "MPI_Iallgather (sizes)");
    finish(request, buf, all_gather_text, deadline, timeout_s);

    std::uint64_t total = 0;
    for (std::uint64_t s : buf->sizes) {
      buf->counts.push_back(to_count(s, all_gather_text));
      buf->displs.push_back(to_count(total, all_gather_text));
      total += s;
    }
    (void)to_count(total, all_gather_text);
    buf->send.assign(bytes.begin(), bytes.end());
    buf->all.resize(total);
    check(MPI_Iallgatherv(buf->send.data(), static_cast<int>(buf->mine), MPI_BYTE, buf->all.data(), buf->counts.data(),
                          buf->displs.data(), MPI_BYTE, comm_, &request),
          "MPI_Iallgatherv");
    finish(request, buf, all_gather_text, deadline, timeout_s);

    std::vector<Bytes> out;
    for (std::size_t p = 0; p < buf->sizes.size(); ++p) {
      const auto from = buf->all.begin() + buf->displs[p];
      out.emplace_back(from, from + buf->counts[p]);
    }
    return out;
  }

  double all_max(double value, double timeout_s) override {
    reap_sends();
    struct Buffers {
      double in = 0, out = 0;
    };
    auto buf = std::make_shared<Buffers>();
    buf->in = value;
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Iallreduce(&buf->in, &buf->out, 1, MPI_DOUBLE, MPI_MAX, comm_, &request), "MPI_Iallreduce");
    finish(
        request, buf, [] { return std::string("all_max"); }, deadline_in(timeout_s), timeout_s);
    return buf->out;
  }

  void send(int peer, int tag, std::span<const std::uint8_t> bytes) override {
    check_process(peer, "send to");
    check_tag(tag);
    const auto what = [&] { return "send to process " + std::to_string(peer) + " (tag " + std::to_string(tag) + ")"; };
    const int count = to_count(bytes.size(), what);
    reap_sends();
    PendingSend s{Bytes(bytes.begin(), bytes.end()), peer, tag};
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Isend(s.bytes.data(), count, MPI_BYTE, peer, tag, comm_, &request),
          [&] { return "MPI_Isend: " + what(); });
    // Moving the vector keeps its heap buffer, the one MPI was given.
    send_requests_.push_back(request);
    sends_.push_back(std::move(s));
  }

  void recv(int peer, int tag, std::span<std::uint8_t> into, double timeout_s) override {
    check_process(peer, "recv from");
    check_tag(tag);
    const auto from = [&] { return "process " + std::to_string(peer) + " (tag " + std::to_string(tag) + ")"; };
    const int expected = to_count(into.size(), [&] { return "recv from " + from(); });
    reap_sends();
    const auto deadline = deadline_in(timeout_s);
    // Probing first: a timeout then leaves nothing posted to cancel, and the size is known
    // before any byte lands in `into`.
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status;
    bool found = false;
    check(probe_until(peer, tag, comm_, deadline, message, status, found),
          [&] { return "MPI_Improbe for a message from " + from(); });
    if (!found) fail("no message from " + from() + " within " + seconds_text(timeout_s) + " s");
    int count = MPI_UNDEFINED;
    MPI_Get_count(&status, MPI_BYTE, &count);
    const auto mismatch = [&] {
      return "message from " + from() + ": expected " + std::to_string(expected) + " bytes, got ";
    };
    if (count == MPI_UNDEFINED) {
      // Too big for one MPI call to receive: left matched and unreceived, so the stream from
      // that peer is out of step for good.
      broken_ = true;
      fail(mismatch() + "more than 2 GiB");
    }

    // A message of the wrong size is still received, into a buffer of its own, so that the
    // stream from that peer stays in step; then the caller hears of it.
    const bool fits = count == expected;
    std::shared_ptr<Bytes> scratch;
    if (!fits) scratch = std::make_shared<Bytes>(static_cast<std::size_t>(count));
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Imrecv(fits ? into.data() : scratch->data(), count, MPI_BYTE, &message, &request),
          [&] { return "MPI_Imrecv of the message from " + from(); });
    bool done = false;
    check(test_until(request, deadline, nullptr, done), [&] { return "MPI_Test of the message from " + from(); });
    if (!done) {
      // Matched, so it cannot be cancelled: MPI may still write into the buffer.
      broken_ = true;
      if (scratch) abandoned_.push_back(scratch);
      fail("the message from " + from() + " started to arrive but did not complete within " + seconds_text(timeout_s) +
           " s");
    }
    if (!fits) fail(mismatch() + std::to_string(count));
  }

  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  std::string where(const std::string& what) const { return "process " + std::to_string(rank_) + ": " + what; }
  [[noreturn]] void fail(const std::string& what) const { throw GroupError(where(what)); }

  // Throws GroupError for a failed MPI call. `call` names it, and is only formatted then: a
  // string or a function that returns one.
  template <class Text>
  void check(int rc, const Text& call) const {
    if (rc != MPI_SUCCESS) [[unlikely]]
      fail(text(call) + ": " + error_text(rc));
  }
  static std::string text(const char* s) { return s; }
  template <std::invocable F>
  static std::string text(const F& f) {
    return f();
  }

  void check_process(int p, const char* what) const {
    if (p < 0 || p >= size_)
      fail(std::string(what) + " process " + std::to_string(p) + ": there is no such process (the group has " +
           std::to_string(size_) + ")");
  }

  void check_tag(int tag) const {
    if (tag < 0 || tag > kMaxTag) fail("tag " + std::to_string(tag) + " is outside 0.." + std::to_string(kMaxTag));
  }

  // MPI counts bytes in an int.
  template <class Text>
  int to_count(std::uint64_t n, const Text& what) const {
    if (n > static_cast<std::uint64_t>(INT_MAX)) [[unlikely]]
      fail(text(what) + ": " + std::to_string(n) + " bytes, more than one MPI call carries (2 GiB)");
    return static_cast<int>(n);
  }

  // Waits for a collective; when it does not complete by `deadline`, keeps `buffers` for MPI
  // and throws. `what` returns the collective's name.
  template <class Text>
  void finish(MPI_Request& request, std::shared_ptr<void> buffers, const Text& what, Clock::time_point deadline,
              double timeout_s) {
    bool done = false;
    check(test_until(request, deadline, nullptr, done), [&] { return "MPI_Test: " + what(); });
    if (done) return;
    broken_ = true;
    if (buffers) abandoned_.push_back(std::move(buffers));
    fail(what() + ": not every process took part within " + seconds_text(timeout_s) + " s");
  }

  // Frees the buffers of sends that completed; a send that failed throws (once: its request
  // is freed, so it is not reported again).
  void reap_sends() {
    if (send_requests_.empty()) return;
    int done = 0;
    reap_indices_.resize(send_requests_.size());
    reap_statuses_.resize(send_requests_.size());
    const int rc = MPI_Testsome(static_cast<int>(send_requests_.size()), send_requests_.data(), &done,
                                reap_indices_.data(), reap_statuses_.data());
    std::string failed;
    if (rc == MPI_ERR_IN_STATUS) {
      for (int i = 0; i < done; ++i) {
        const int error = reap_statuses_[static_cast<std::size_t>(i)].MPI_ERROR;
        if (error == MPI_SUCCESS) continue;
        const auto at = static_cast<std::size_t>(reap_indices_[static_cast<std::size_t>(i)]);
        const PendingSend& s = sends_[at];
        if (failed.empty())
          failed = "send of " + std::to_string(s.bytes.size()) + " bytes to process " + std::to_string(s.peer) +
                   " (tag " + std::to_string(s.tag) + "): " + error_text(error);
        MPI_Request_free(&send_requests_[at]);
      }
    } else {
      check(rc, "MPI_Testsome (sends)");
    }
    // Completed requests are MPI_REQUEST_NULL now (MPI_UNDEFINED: all of them were); keep the
    // rest in their order.
    if (done != 0) {
      std::size_t kept = 0;
      for (std::size_t i = 0; i < send_requests_.size(); ++i) {
        if (send_requests_[i] == MPI_REQUEST_NULL) continue;
        // Never a self move-assignment: that would free the bytes MPI is still sending.
        if (kept != i) {
          send_requests_[kept] = send_requests_[i];
          sends_[kept] = std::move(sends_[i]);
        }
        ++kept;
      }
      send_requests_.resize(kept);
      sends_.resize(kept);
    }
    if (!failed.empty()) fail(failed);
  }

  // At destruction: waits a little for the last sends to be received, then gives up on them.
  // A send MPI could neither finish nor cancel keeps its bytes (MPI may still read them) and
  // breaks the group, so MPI_Finalize does not wait for it either.
  void drain_sends() noexcept {
    if (send_requests_.empty()) return;
    try {
      const auto deadline = deadline_in(kSendDrain_s);
      while (!send_requests_.empty() && Clock::now() < deadline) {
        reap_sends();
        bool done = false;
        if (!send_requests_.empty())
          check(test_until(send_requests_.front(), deadline, nullptr, done), "MPI_Test (sends)");
      }
      reap_sends();
    } catch (const GroupError&) {
      // A failed send at the end changes nothing: the process is ending.
    }
    for (MPI_Request& r : send_requests_) {
      if (r == MPI_REQUEST_NULL) continue;
      MPI_Cancel(&r);
      int done = 0;
      MPI_Test(&r, &done, MPI_STATUS_IGNORE);
      if (done) continue;
      MPI_Request_free(&r);
      broken_ = true;
    }
    if (broken_)
      for (PendingSend& s : sends_) abandoned_.push_back(std::make_shared<Bytes>(std::move(s.bytes)));
    send_requests_.clear();
    sends_.clear();
  }

  bool owns_mpi_ = false;
  bool broken_ = false;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 0;
  std::vector<ProcessPlace> places_;
  std::string implementation_;
  // Sends in flight: requests (contiguous, for MPI_Testsome) and their bytes, index for index.
  std::vector<MPI_Request> send_requests_;
  std::vector<PendingSend> sends_;
  // MPI_Testsome's outputs, kept between calls so reaping allocates nothing.
  std::vector<int> reap_indices_;
  std::vector<MPI_Status> reap_statuses_;
  // Buffers of calls abandoned at their deadline, which MPI may still read or write.
  std::vector<std::shared_ptr<void>> abandoned_;
};

}  // namespace

}  // namespace ppsched::run::mpi

extern "C" __attribute__((visibility("default"))) ppsched::run::ProcessGroup* ppsched_make_mpi_group(
    char* error, std::size_t error_size) noexcept {
  std::string why;
  try {
    return new ppsched::run::mpi::MpiGroup();
  } catch (const std::exception& e) {
    why = e.what();
  } catch (...) {
    why = "an unknown error while joining the MPI job";
  }
  if (error && error_size > 0) {
    const std::size_t n = std::min(why.size(), error_size - 1);
    std::memcpy(error, why.data(), n);
    error[n] = '\0';
  }
  return nullptr;
}
