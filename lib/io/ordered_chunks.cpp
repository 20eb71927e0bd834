#include "io/ordered_chunks.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

namespace ppsched {

void ChunkText::grow(std::size_t at_least) {
  const std::size_t capacity = std::max(at_least, 2 * capacity_);
  auto next = std::make_unique_for_overwrite<char[]>(capacity);
  if (size_ > 0) std::memcpy(next.get(), data_.get(), size_);
  data_ = std::move(next);
  capacity_ = capacity;
}

namespace {

// Whose turn it is to write, and whether a thread failed.
class Turns {
 public:
  // Waits until chunk k may be written; false when the other thread failed.
  bool wait_for(std::size_t k) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return next_ == k || failed_; });
    return !failed_;
  }
  void done(std::size_t k) {
    {
      std::lock_guard lock(mutex_);
      next_ = k + 1;
    }
    changed_.notify_all();
  }
  void fail(std::exception_ptr e) {
    {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::move(e);
      failed_ = true;
    }
    changed_.notify_all();
  }
  std::exception_ptr error() const { return error_; }  // once both threads are done

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t next_ = 0;
  bool failed_ = false;
  std::exception_ptr error_;
};

// One thread's share: chunks first, first + 2, ...
void take_turns(ByteSink& out, std::size_t chunks, std::size_t first,
                const std::function<void(std::size_t, ChunkText&)>& format, Turns& turns) {
  try {
    ChunkText text;
    for (std::size_t k = first; k < chunks; k += 2) {
      text.clear();
      format(k, text);
      if (!turns.wait_for(k)) return;
      out.write(text.view());
      turns.done(k);
    }
  } catch (...) {
    turns.fail(std::current_exception());
  }
}

}  // namespace

void write_ordered_chunks(ByteSink& out, std::size_t chunks, const std::function<void(std::size_t, ChunkText&)>& format,
                          bool two_threads) {
  if (chunks <= 1 || (!two_threads && std::thread::hardware_concurrency() < 2)) {
    ChunkText text;
    for (std::size_t k = 0; k < chunks; ++k) {
      text.clear();
      format(k, text);
      out.write(text.view());
    }
    return;
  }
  Turns turns;
  std::thread helper(take_turns, std::ref(out), chunks, 1, std::cref(format), std::ref(turns));
  take_turns(out, chunks, 0, format, turns);
  helper.join();
  if (turns.error()) std::rethrow_exception(turns.error());
}

}  // namespace ppsched
