// Two threads, each running the ranks of one half of a schedule, that wait for what the other half
// writes (a cell per event, NaN or 0 until written) and poll for it: the aggregate simulator
// (aggregate.cpp) and the dry run's placing of actions (step_moments.cpp) split this way on a
// schedule of a million steps or more (ir/rank_halves.hpp).
//
// Writing a cell is a plain release store: nothing else is shared while both halves run. Each half
// counts its writes on its own. Only a half whose own work ran out and whose poll found nothing
// takes part in deciding whether the run is stuck: it states its count, reads the other's, polls
// again, and records both counts. Stuck: the other half's record says it polled after reading our
// present count, and it has written nothing since the count we polled after. Then each has seen
// every cell the other will ever write (a half idle in vain cannot wake, as nothing new comes), and
// neither can move. Both halves reach that verdict.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <exception>
#include <thread>

namespace ppsched {

class HalvesMeeting {
 public:
  enum class Verdict : std::uint8_t { Moved, Wait, Stuck };

  /// A half's whole loop. work() runs its own work until none is left (the half's count of writes,
  /// `written`, may grow meanwhile); poll() moves what the other half has written to its work (true
  /// if anything moved); waiting() says whether anything still waits for the other half; done()
  /// whether all its ranks finished. True: the half finished. False: it cannot (its own ranks wait
  /// for what never comes, the other half failed, or neither half can move).
  template <class Work, class Poll, class Waiting, class Done>
  bool run_half(std::uint32_t half, const std::uint64_t& written, Work&& work, Poll&& poll, Waiting&& waiting,
                Done&& done) {
    for (std::uint32_t idle = 0;;) {
      work();
      if (poll()) {
        idle = 0;
        continue;
      }
      if (!waiting()) {  // nothing waits for the other half: finished, or stuck on its own
        if (!done()) return false;
        finished(half, written);
        return true;
      }
      if (failed()) return false;
      switch (after_vain_poll(half, written, poll)) {
        case Verdict::Moved:
          idle = 0;
          break;
        case Verdict::Stuck:
          return false;
        case Verdict::Wait:
          relax(idle);
      }
    }
  }

  /// For `half` (0 or 1) whose own work ran out and whose poll found nothing, having written
  /// `written` cells for the other half: Moved when a second poll (poll() says whether anything
  /// moved) found something, Stuck when neither half can ever move (or, past 2^32 writes, when
  /// this cannot be told: the caller's one-thread run decides either way), else Wait.
  template <class Poll>
  Verdict after_vain_poll(std::uint32_t half, std::uint64_t written, Poll&& poll) {
    const std::uint32_t other = 1 - half;
    count_[half].store(written);
    const std::uint64_t theirs = count_[other].load();
    if (poll()) return Verdict::Moved;
    if (written >= 0xFFFFFFFFu || theirs >= 0xFFFFFFFFu) {  // too many to record
      fail();
      return Verdict::Stuck;
    }
    record_[half].store(written << 32 | theirs);
    const std::uint64_t r = record_[other].load();
    const bool stuck = r == kFinished ? count_[other].load() == theirs
                                      : r != kNoRecord && r >> 32 == theirs && (r & 0xFFFFFFFFu) == written;
    return stuck ? Verdict::Stuck : Verdict::Wait;
  }

  /// `half` has nothing left to do, having written `written` cells.
  void finished(std::uint32_t half, std::uint64_t written) {
    count_[half].store(written);
    record_[half].store(kFinished);
  }

  /// A half has failed (it throws): the other stops at its next wait.
  void fail() { failed_.store(true); }
  bool failed() const { return failed_.load(); }

  /// Between two vain polls: a pause, then, after many, a yield (the other half may need the core).
  static void relax(std::uint32_t& idle) {
    if (++idle < 1024) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#else
      std::this_thread::yield();
#endif
    } else {
      std::this_thread::yield();
    }
  }

  /// Runs first() on this thread and second() on one of its own; an exception from either fails
  /// the meeting (so the other stops waiting). Returns what each threw (null: nothing).
  template <class First, class Second>
  std::array<std::exception_ptr, 2> run(First&& first, Second&& second) {
    std::array<std::exception_ptr, 2> failed;
    std::thread helper([&] {
      try {
        second();
      } catch (...) {
        failed[1] = std::current_exception();
        fail();
      }
    });
    try {
      first();
    } catch (...) {
      failed[0] = std::current_exception();
      fail();
    }
    helper.join();
    return failed;
  }

 private:
  static constexpr std::uint64_t kNoRecord = ~std::uint64_t{0}, kFinished = kNoRecord - 1;
  std::atomic<std::uint64_t> count_[2] = {0, 0};  ///< each half's writes, as of its last idle moment
  /// Each half's last vain poll: its own count then (high 32 bits) and the other's count it had
  /// read before polling (low 32 bits); kFinished once it has nothing left to do.
  std::atomic<std::uint64_t> record_[2] = {kNoRecord, kNoRecord};
  std::atomic<bool> failed_{false};
};

}  // namespace ppsched
