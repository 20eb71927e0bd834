// The lines of a schedule CSV, cut the way fast-cpp-csv-parser's LineReader cuts them (BOM, CRLF,
// missing final newline, its 16 MiB line limit), but found with memchr: LineReader looks for each
// newline a byte at a time, which on a schedule's long rows costs more than anything else the reader
// does (docs/bench.md, "Figures behind the reader's choices"). The byte source is still
// fast-cpp-csv-parser's interface (io::ByteSourceBase).
//
// A source reads a whole descriptor or text, or one byte range of a regular file or a text, so that
// two threads can cut and parse the two halves of one file (pytorch_csv_reader.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "parse/fccp.hpp"

namespace ppsched {

/// Bytes from a descriptor (read() to its end, or pread() of [begin, end) of a regular file) or
/// from text held in memory. It does not own the descriptor. Throws IoError on a failed read.
class CsvByteSource final : public io::ByteSourceBase {
 public:
  /// The descriptor from where it stands to its end (a pipe, standard input).
  CsvByteSource(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  /// Bytes [begin, end) of a regular file.
  CsvByteSource(int fd, std::string name, std::uint64_t begin, std::uint64_t end)
      : fd_(fd), name_(std::move(name)), ranged_(true), at_(begin), end_(end) {}
  /// Text in memory (which must outlive the source).
  explicit CsvByteSource(std::string_view text) : text_(text) {}

  /// Fills `buffer` completely unless the bytes end first: LineReader treats a short read as the end.
  int read(char* buffer, int size) override;

 private:
  int fd_ = -1;
  std::string name_;
  bool ranged_ = false;
  std::uint64_t at_ = 0, end_ = 0;
  std::string_view text_;
};

/// A byte source's lines, cut as LineReader cuts them: a UTF-8 BOM at the start is skipped (when
/// `skip_bom`: a source that starts at the file's first byte); a line ends at '\n', and one '\r'
/// before it is dropped; the last line may lack its '\n'; a line of kBlock bytes or more
/// (LineReader's block) is an error. Lines are views into the buffer, valid until the next call.
class LineSplitter {
 public:
  static constexpr std::size_t kBlock = std::size_t{1} << 24;

  LineSplitter(CsvByteSource& source, bool skip_bom) : source_(source), skip_bom_(skip_bom) {}

  enum class Status { Line, End, TooLong };
  /// The next line into `line`; End after the last; TooLong for a line of kBlock bytes or more.
  Status next(std::string_view& line);
  /// Where the last line returned starts, in bytes from the source's first byte.
  std::uint64_t line_offset() const { return line_offset_; }
  /// Whether the source started with a BOM that was skipped.
  bool skipped_bom() const { return skipped_bom_; }

 private:
  void start();
  void refill();

  static constexpr std::size_t kFirstCapacity = std::size_t{1} << 16, kMaxCapacity = 2 * kBlock;
  CsvByteSource& source_;
  std::unique_ptr<char[]> buffer_;
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0, end_ = 0;
  std::uint64_t consumed_ = 0;  ///< bytes of the source before buffer_[0]
  std::uint64_t line_offset_ = 0;
  bool skip_bom_ = true, skipped_bom_ = false;
  bool started_ = false, eof_ = false;
};

/// Where to cut a regular file of `size` bytes into two halves that each hold whole lines: just
/// past the first '\n' at or after the middle. `size` when there is none within a line's limit
/// (then one thread reads it all). Throws IoError.
std::uint64_t split_after_middle_newline(int fd, const std::string& name, std::uint64_t size);
/// The same for text.
std::uint64_t split_after_middle_newline(std::string_view text);

}  // namespace ppsched
