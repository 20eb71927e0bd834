#include "io/ordered_chunks.hpp"

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>

#include "support/catch.hpp"

using namespace ppsched;

namespace {

// Chunk k's text: its number and a length that varies, so that a chunk out of place shows.
void chunk_text(std::size_t k, ChunkText& text) {
  text.append("<" + std::to_string(k) + ">");
  text.append(std::string(k % 7 * 1000, static_cast<char>('a' + k % 26)));
}

std::string expected_text(std::size_t chunks) {
  std::string all;
  for (std::size_t k = 0; k < chunks; ++k)
    all += "<" + std::to_string(k) + ">" + std::string(k % 7 * 1000, char('a' + k % 26));
  return all;
}

// A sink that fails on its n-th write.
class FailingSink final : public ByteSink {
 public:
  explicit FailingSink(int fail_at) : fail_at_(fail_at) {}
  void write(std::string_view bytes) override {
    if (++writes_ == fail_at_) throw IoError("out.csv", "cannot write: No space left on device");
    text += bytes;
  }
  std::string text;

 private:
  int fail_at_, writes_ = 0;
};

}  // namespace

TEST_CASE("ordered chunks: two threads write every chunk once, in order") {
  for (bool two : {false, true})
    for (std::size_t chunks : {0, 1, 2, 3, 10, 201}) {
      std::string out;
      StringSink sink(out);
      write_ordered_chunks(sink, chunks, chunk_text, two);
      CHECK(out == expected_text(chunks));
    }
}

TEST_CASE("ordered chunks: the helper formats while the caller writes") {
  // Each chunk's formatting records which thread ran it: with two threads, both do.
  std::atomic<int> on_caller{0}, on_helper{0};
  const auto caller = std::this_thread::get_id();
  std::string out;
  StringSink sink(out);
  write_ordered_chunks(
      sink, 50,
      [&](std::size_t k, ChunkText& text) {
        (std::this_thread::get_id() == caller ? on_caller : on_helper)++;
        chunk_text(k, text);
      },
      true);
  CHECK(out == expected_text(50));
  CHECK(on_caller == 25);
  CHECK(on_helper == 25);
}

TEST_CASE("ordered chunks: a failure in either thread stops both and reaches the caller") {
  for (std::size_t bad : {0, 1, 6, 7}) {  // formatted by the caller (even) or the helper (odd)
    std::string out;
    StringSink sink(out);
    auto failing = [&](std::size_t k, ChunkText& text) {
      if (k == bad) throw std::runtime_error("chunk " + std::to_string(k));
      chunk_text(k, text);
    };
    CHECK_THROWS_WITH(write_ordered_chunks(sink, 40, failing, true), "chunk " + std::to_string(bad));
    // Some of the chunks before it (the other thread may stop before writing its own), nothing after.
    CHECK(expected_text(bad).starts_with(out));
  }
  for (int fail_at : {1, 2, 5}) {
    FailingSink sink(fail_at);
    CHECK_THROWS_AS(write_ordered_chunks(sink, 40, chunk_text, true), IoError);
    CHECK(sink.text == expected_text(static_cast<std::size_t>(fail_at - 1)));
  }
}
