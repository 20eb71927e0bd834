// Writing a large output as numbered chunks formatted by two threads and written in order.
//
// A 6M-action schedule's CSV or step grid is 70-100 MB of text, and formatting it costs about as
// much as the simulation that made it (issue 48). Its chunks are independent: chunk k is
// formatted by one of two threads (the caller takes the even ones, a helper the odd ones) into that
// thread's own buffer, which is written to the sink once every chunk before it has been, then
// reused. So the output is the same bytes as one thread's, no more than two chunks exist at once,
// and a thread formats its next chunk while the other writes.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string_view>

#include "io/byte_sink.hpp"

namespace ppsched {

/// A chunk's text, written through a raw pointer: a writer asks for room for what it may write,
/// writes, and says where it stopped. The storage grows by doubling and is kept between chunks.
class ChunkText {
 public:
  /// A place for at least `n` more bytes after the text so far.
  char* room(std::size_t n) {
    if (size_ + n > capacity_) grow(size_ + n);
    return data_.get() + size_;
  }
  /// The text now ends at `end`, a pointer into the last room() given.
  void used(char* end) { size_ = static_cast<std::size_t>(end - data_.get()); }
  void append(std::string_view s) { used(std::copy(s.begin(), s.end(), room(s.size()))); }
  std::string_view view() const { return {data_.get(), size_}; }
  std::size_t size() const { return size_; }
  void clear() { size_ = 0; }

 private:
  void grow(std::size_t at_least);
  std::unique_ptr<char[]> data_;
  std::size_t size_ = 0, capacity_ = 0;
};

/// Writes chunks 0 .. chunks-1 to `out` in order, chunk k being what format(k, text) leaves in an
/// empty `text`. Two threads format when `chunks` > 1 and the machine has two cores (or
/// `two_threads` forces it, for tests); otherwise the caller formats every chunk. An exception from
/// either thread (format's, or the sink's) stops both and is rethrown here; what was written by then
/// is a prefix of the output.
void write_ordered_chunks(ByteSink& out, std::size_t chunks, const std::function<void(std::size_t, ChunkText&)>& format,
                          bool two_threads = false);

}  // namespace ppsched
