#include "parse/csv_lines.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "io/byte_sink.hpp"

namespace ppsched {

int CsvByteSource::read(char* buffer, int size) {
  if (fd_ < 0) {
    const auto n = std::min<std::size_t>(static_cast<std::size_t>(size), text_.size());
    std::memcpy(buffer, text_.data(), n);
    text_.remove_prefix(n);
    return static_cast<int>(n);
  }
  int got = 0;
  while (got < size) {
    auto want = static_cast<std::size_t>(size - got);
    if (ranged_) want = static_cast<std::size_t>(std::min<std::uint64_t>(want, end_ - at_));
    if (want == 0) break;
    const ssize_t n =
        ranged_ ? ::pread(fd_, buffer + got, want, static_cast<off_t>(at_)) : ::read(fd_, buffer + got, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError(name_, std::string("cannot read: ") + std::strerror(errno));
    }
    if (n == 0) break;
    got += static_cast<int>(n);
    at_ += static_cast<std::uint64_t>(n);
  }
  return got;
}

LineSplitter::Status LineSplitter::next(std::string_view& line) {
  if (!started_) start();
  for (;;) {
    const char* begin = buffer_.get() + begin_;
    const std::size_t available = end_ - begin_;
    const auto* newline = static_cast<const char*>(std::memchr(begin, '\n', available));
    if (newline || eof_) {
      const std::size_t length = newline ? static_cast<std::size_t>(newline - begin) : available;
      if (!newline && length == 0) return Status::End;
      if (length + 1 > kBlock) return Status::TooLong;
      line_offset_ = consumed_ + begin_;
      begin_ += length + (newline ? 1 : 0);
      line = std::string_view(begin, length);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      return Status::Line;
    }
    if (available >= kBlock) return Status::TooLong;  // no newline in a whole block
    refill();
  }
}

void LineSplitter::start() {
  started_ = true;
  refill();
  if (skip_bom_ && end_ >= 3 && buffer_[0] == '\xEF' && buffer_[1] == '\xBB' && buffer_[2] == '\xBF') {
    begin_ = 3;
    skipped_bom_ = true;
  }
}

// Keeps the unread bytes and reads as many more as fit; a short read is the end of the input. The
// buffer starts small (validate reads many small files in one run, and a fuzzer one tiny input after
// another) and doubles, up to two blocks, whenever the unread part of a line fills half of it, so a
// long line is moved at most a few times.
void LineSplitter::refill() {
  if (begin_ > 0) {
    std::memmove(buffer_.get(), buffer_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    consumed_ += begin_;
    begin_ = 0;
  }
  if (capacity_ == 0 || (end_ > capacity_ / 2 && capacity_ < kMaxCapacity)) {
    const std::size_t grown = capacity_ == 0 ? kFirstCapacity : std::min(2 * capacity_, kMaxCapacity);
    std::unique_ptr<char[]> next(new char[grown]);  // not zero-filled: only read bytes are touched
    if (end_ > 0) std::memcpy(next.get(), buffer_.get(), end_);
    buffer_ = std::move(next);
    capacity_ = grown;
  }
  const std::size_t room = capacity_ - end_;
  const int got = source_.read(buffer_.get() + end_, static_cast<int>(room));
  end_ += static_cast<std::size_t>(got);
  eof_ = static_cast<std::size_t>(got) < room;
}

std::uint64_t split_after_middle_newline(int fd, const std::string& name, std::uint64_t size) {
  const std::uint64_t middle = size / 2;
  CsvByteSource source(fd, name, middle, std::min<std::uint64_t>(size, middle + LineSplitter::kBlock));
  std::vector<char> chunk(std::size_t{1} << 16);
  for (std::uint64_t at = middle;;) {
    const int got = source.read(chunk.data(), static_cast<int>(chunk.size()));
    if (got <= 0) return size;
    if (const void* nl = std::memchr(chunk.data(), '\n', static_cast<std::size_t>(got)))
      return at + static_cast<std::uint64_t>(static_cast<const char*>(nl) - chunk.data()) + 1;
    at += static_cast<std::uint64_t>(got);
  }
}

std::uint64_t split_after_middle_newline(std::string_view text) {
  const std::size_t middle = text.size() / 2;
  const std::size_t nl = text.substr(0, std::min(text.size(), middle + LineSplitter::kBlock)).find('\n', middle);
  return nl == std::string_view::npos ? text.size() : nl + 1;
}

}  // namespace ppsched
