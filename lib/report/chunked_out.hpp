// The buffered front of a ByteSink that the streaming views (trace, SVG) write through: text is
// appended to a local buffer and handed to the sink in chunks, so a 10M-action output never
// exists whole in memory and the sink's virtual call is paid once per chunk, not per token.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <iterator>
#include <string_view>
#include <utility>

#include "io/byte_sink.hpp"

namespace ppsched {

class ChunkedOut {
 public:
  // Large enough that the sink's own work vanishes, small enough to stay in L2.
  static constexpr std::size_t kChunk = std::size_t{1} << 16;

  explicit ChunkedOut(ByteSink& sink) : sink_(sink) { buf_.reserve(kChunk + 4096); }

  void raw(std::string_view s) { buf_.append(s.data(), s.data() + s.size()); }
  void ch(char c) { buf_.push_back(c); }
  template <typename... Args>
  void fmt(fmt::format_string<Args...> f, Args&&... args) {
    fmt::format_to(std::back_inserter(buf_), f, std::forward<Args>(args)...);
  }
  /// Hands the buffer to the sink once it holds a chunk; call between records.
  void maybe_flush() {
    if (buf_.size() >= kChunk) flush();
  }
  void flush() {
    if (buf_.size() != 0) sink_.write(std::string_view(buf_.data(), buf_.size()));
    buf_.clear();
  }

 private:
  ByteSink& sink_;
  fmt::memory_buffer buf_;
};

}  // namespace ppsched
