// Reading PyTorch's schedule CSV. Lines are cut here the way fast-cpp-csv-parser's LineReader cuts
// them (BOM, CRLF, missing final newline, line numbers, its 16 MiB line limit), but found with
// memchr: LineReader looks for each newline a byte at a time, which on a schedule's long rows costs
// more than anything else the reader does (docs/bench.md, "Figures behind the reader's choices").
// Cells are split here because rows are ragged and empty cells mean something, which its
// CSVReader<N> cannot express. The byte source is still fast-cpp-csv-parser's interface
// (io::ByteSourceBase).
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/byte_sink.hpp"
#include "io/input_file.hpp"
#include "ir/action_text.hpp"
#include "parse/cell_diagnostics.hpp"
#include "parse/fccp.hpp"
#include "parse/io_diagnostic.hpp"
#include "parse/pytorch_csv.hpp"

namespace ppsched {

namespace {

// Where the first NUL byte of the input is (1-based line and column), found as the bytes are
// read. LineReader hands out NUL-terminated lines, so a NUL inside a line would silently cut it
// short; the reader reports it when it reaches that line. This lives in the reader, not in the
// byte source: LineReader destroys its source as soon as it has read a small input whole.
struct NulPosition {
  std::uint64_t line = 0, column = 0;  // 0: none seen
};

// A byte source over a descriptor or a string that records the first NUL byte in a NulPosition.
class CheckedSource final : public io::ByteSourceBase {
 public:
  CheckedSource(int fd, std::string name, NulPosition& nul) : fd_(fd), name_(std::move(name)), nul_(nul) {}
  CheckedSource(std::string_view text, NulPosition& nul) : text_(text), nul_(nul) {}
  ~CheckedSource() override {
    if (fd_ >= 0) ::close(fd_);
  }

  int read(char* buffer, int size) override {
    int n = fill(buffer, size);
    scan(buffer, static_cast<std::size_t>(n));
    return n;
  }

 private:
  // LineReader treats a short read as the end of input, so fill the buffer completely.
  int fill(char* buffer, int size) {
    if (fd_ < 0) {
      auto n = std::min<std::size_t>(static_cast<std::size_t>(size), text_.size());
      std::memcpy(buffer, text_.data(), n);
      text_.remove_prefix(n);
      return static_cast<int>(n);
    }
    int got = 0;
    while (got < size) {
      ssize_t n = ::read(fd_, buffer + got, static_cast<std::size_t>(size - got));
      if (n < 0) {
        if (errno == EINTR) continue;
        throw IoError(name_, std::string("cannot read: ") + std::strerror(errno));
      }
      if (n == 0) break;
      got += static_cast<int>(n);
    }
    return got;
  }

  void scan(const char* p, std::size_t n) {
    if (nul_.line == 0) {
      if (const void* z = std::memchr(p, 0, n)) {
        auto at = static_cast<std::size_t>(static_cast<const char*>(z) - p);
        std::uint64_t nl = count_newlines(p, at);
        const char* last_nl = static_cast<const char*>(memrchr(p, '\n', at));
        nul_.line = lines_ + nl + 1;
        nul_.column = last_nl ? static_cast<std::uint64_t>(p + at - last_nl) : since_newline_ + at + 1;
      }
    }
    lines_ += count_newlines(p, n);
    const char* last_nl = static_cast<const char*>(memrchr(p, '\n', n));
    since_newline_ = last_nl ? static_cast<std::uint64_t>(p + n - last_nl - 1) : since_newline_ + n;
  }

  // A schedule's lines are long (a rank's whole program), so newlines are found with memchr
  // rather than counted byte by byte as std::count does (docs/bench.md, "Figures behind the reader's
  // choices").
  static std::uint64_t count_newlines(const char* p, std::size_t n) {
    std::uint64_t count = 0;
    for (const char* end = p + n; const void* hit = std::memchr(p, '\n', static_cast<std::size_t>(end - p));) {
      ++count;
      p = static_cast<const char*>(hit) + 1;
    }
    return count;
  }

  int fd_ = -1;
  std::string name_;
  std::string_view text_;
  NulPosition& nul_;
  std::uint64_t lines_ = 0, since_newline_ = 0;
};

// A byte source's lines, cut as LineReader cuts them: a UTF-8 BOM at the start is skipped; a line
// ends at '\n', and one '\r' before it is dropped; the last line may lack its '\n'; a line of
// kBlock bytes or more (LineReader's block) is an error. Lines are views into the buffer, valid
// until the next call.
class LineSplitter {
 public:
  static constexpr std::size_t kBlock = std::size_t{1} << 24;

  explicit LineSplitter(std::unique_ptr<CheckedSource> source) : source_(std::move(source)) {}

  enum class Status { Line, End, TooLong };
  /// The next line into `line`; End after the last; TooLong for a line of kBlock bytes or more.
  Status next(std::string_view& line) {
    if (!started_) start();
    for (;;) {
      const char* begin = buffer_.get() + begin_;
      const std::size_t available = end_ - begin_;
      const auto* newline = static_cast<const char*>(std::memchr(begin, '\n', available));
      if (newline || eof_) {
        const std::size_t length = newline ? static_cast<std::size_t>(newline - begin) : available;
        if (!newline && length == 0) return Status::End;
        if (length + 1 > kBlock) return Status::TooLong;
        begin_ += length + (newline ? 1 : 0);
        ++line_number_;
        line = std::string_view(begin, length);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        return Status::Line;
      }
      if (available >= kBlock) return Status::TooLong;  // no newline in a whole block
      refill();
    }
  }
  unsigned line_number() const { return line_number_; }

 private:
  void start() {
    started_ = true;
    refill();
    if (end_ >= 3 && buffer_[0] == '\xEF' && buffer_[1] == '\xBB' && buffer_[2] == '\xBF') begin_ = 3;
  }
  // Keeps the unread bytes and reads as many more as fit; a short read is the end of the input.
  // The buffer starts small (validate reads many small files in one run, and a fuzzer one tiny
  // input after another) and doubles, up to two blocks, whenever the unread part of a line fills
  // half of it, so a long line is moved at most a few times.
  void refill() {
    if (begin_ > 0) {
      std::memmove(buffer_.get(), buffer_.get() + begin_, end_ - begin_);
      end_ -= begin_;
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
    const int got = source_->read(buffer_.get() + end_, static_cast<int>(room));
    end_ += static_cast<std::size_t>(got);
    eof_ = static_cast<std::size_t>(got) < room;
  }

  static constexpr std::size_t kFirstCapacity = std::size_t{1} << 16, kMaxCapacity = 2 * kBlock;
  std::unique_ptr<CheckedSource> source_;
  std::unique_ptr<char[]> buffer_;
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0, end_ = 0;
  bool started_ = false, eof_ = false;
  unsigned line_number_ = 0;
};

class CsvScheduleReader {
 public:
  CsvScheduleReader(std::string name, const CsvReadOptions& opt, DiagnosticSink& sink)
      : name_(std::move(name)), opt_(opt), sink_(sink) {
    out_.source.file = name_;
  }

  /// The position the byte source records its first NUL byte in; must outlive run().
  NulPosition& nul() { return nul_; }

  std::optional<ParsedSchedule> run(std::unique_ptr<CheckedSource> source) {
    {
      LineSplitter lines(std::move(source));
      std::string_view raw;
      LineSplitter::Status status;
      while ((status = lines.next(raw)) == LineSplitter::Status::Line) {
        unsigned line_no = lines.line_number();
        if (nul_.line == line_no) {
          std::string_view text = raw.substr(0, raw.find('\0'));  // up to the NUL
          error_at(line_no, text, nul_.column - 1, 1, "csv-syntax", "NUL byte in input: a schedule CSV is text");
          return std::nullopt;
        }
        if (out_.schedule.ranks.size() == kMaxCsvRanks) {
          error_at(line_no, raw, 0, 1, "csv-limit",
                   "more than " + std::to_string(kMaxCsvRanks) +
                       " rows: each row is a rank, and ppsched supports at most that many ranks");
          return std::nullopt;
        }
        read_row(line_no, raw);
        if (sink_.full()) {
          Diagnostic d;
          d.severity = Severity::Note;
          d.loc = {name_, line_no, 0, {}};
          d.message = "too many errors; stopped reading here";
          sink_.report(std::move(d));
          break;
        }
      }
      if (status == LineSplitter::Status::TooLong) {
        unsigned line_no = static_cast<unsigned>(out_.schedule.ranks.size() + 1);
        Diagnostic d;
        d.rule = "csv-limit";
        d.loc = {name_, line_no, 1, {}};
        d.message = "line is longer than 16 MiB, ppsched's limit for one rank's row";
        sink_.report(std::move(d));
        return std::nullopt;
      }
    }
    if (suppressed_warnings_) {
      Diagnostic d;
      d.severity = Severity::Warning;
      d.rule = "action-noncanonical";
      d.loc = {name_, 0, 0, {}};
      d.message = std::to_string(suppressed_warnings_) + " more non-canonical cell(s) not shown";
      sink_.report(std::move(d));
    }
    if (refuse_old_dialect() || sink_.has_errors()) return std::nullopt;
    return std::move(out_);
  }

 private:
  void error_at(unsigned line_no, std::string_view line, std::size_t col0, std::size_t len, std::string_view rule,
                std::string message) {
    Diagnostic d;
    d.rule = std::string(rule);
    d.loc = {name_, line_no, static_cast<std::uint32_t>(col0 + 1), {}};
    d.message = std::move(message);
    if (!sink_.full()) d.snippet = make_snippet(line, col0, len);  // a full sink only counts it
    sink_.report(std::move(d));
  }

  void read_row(unsigned line_no, std::string_view line) {
    auto& program = out_.schedule.ranks.emplace_back().actions;
    auto& columns = out_.source.step_column.emplace_back();
    out_.source.rank_line.push_back(line_no);
    if (line.empty()) return;  // a blank line is a rank with no actions
    // Every comma ends a cell (commas inside quotes only make this an overestimate), so the row's
    // arrays are sized once: growing them by doubling copied each 10M-action file about twice
    // and touched twice the fresh memory.
    const std::size_t cells = count_commas(line) + 1;
    program.reserve(cells);
    columns.reserve(cells);
    const char* const line_end = line.data() + line.size();
    std::size_t pos = 0;
    for (;;) {
      const std::size_t cell_start = pos;
      std::size_t end;  // where the cell ends: its ',' or the line's end
      // Nearly every cell of a real file is canonical: parsed and split in one pass. Any other
      // cell (quoted, non-canonical, an error) is split, then read by read_cell.
      Action fast = Action::idle();  // an empty cell: an idle step
      const char* stop = line[pos] == ','   ? line.data() + pos
                         : line[pos] == '"' ? nullptr
                                            : parse_canonical_prefix(line.data() + pos, line_end, fast);
      if (stop && (stop == line_end || *stop == ',')) {
        keep(program, in_dialect(fast));
        end = static_cast<std::size_t>(stop - line.data());
      } else {
        std::string_view cell;
        std::size_t content_start = pos;  // where the cell's text starts in the line
        if (line[pos] == '"') {
          if (!read_quoted(line_no, line, pos, end)) return;
          cell = unquoted_;
          content_start = pos + 1;
        } else {
          end = line.find(',', pos);
          if (end == std::string_view::npos) end = line.size();
          cell = line.substr(pos, end - pos);
        }
        read_cell(line_no, line, cell, content_start, program);
        if (sink_.full()) {  // only a cell read here can report
          columns.push_back(static_cast<std::uint32_t>(cell_start + 1));
          return;
        }
      }
      columns.push_back(static_cast<std::uint32_t>(cell_start + 1));
      if (end >= line.size()) return;
      pos = end + 1;             // past the ','
      if (pos == line.size()) {  // a trailing comma leaves an empty (idle) last cell
        program.push_back(Action::idle());
        columns.push_back(static_cast<std::uint32_t>(pos + 1));
        return;
      }
    }
  }

  // Commas come every few bytes, so they are counted, not searched for: in blocks of at most 255
  // bytes with a byte-wide counter, a loop GCC turns into 16 or 32 bytes per step (counted into a
  // size_t, GCC keeps it byte by byte: docs/bench.md, "Figures behind the reader's choices").
  static std::size_t count_commas(std::string_view line) {
    std::size_t total = 0;
    for (std::size_t i = 0; i < line.size();) {
      const std::size_t block = std::min<std::size_t>(line.size() - i, 255);
      unsigned char in_block = 0;
      for (std::size_t j = 0; j < block; ++j) in_block = static_cast<unsigned char>(in_block + (line[i + j] == ','));
      total += in_block;
      i += block;
    }
    return total;
  }

  // Reads an RFC 4180 quoted cell starting at line[pos] == '"' into unquoted_; sets `end` to
  // the position of the ',' that ends it (or line.size()).
  bool read_quoted(unsigned line_no, std::string_view line, std::size_t pos, std::size_t& end) {
    unquoted_.clear();
    std::size_t i = pos + 1;
    for (;;) {
      if (i >= line.size()) {
        error_at(line_no, line, pos, 1, "csv-syntax", "unterminated quoted cell (a quoted cell cannot span lines)");
        return false;
      }
      if (line[i] == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          unquoted_ += '"';
          i += 2;
          continue;
        }
        ++i;
        break;
      }
      unquoted_ += line[i++];
    }
    end = line.find(',', i);
    if (end == std::string_view::npos) end = line.size();
    if (end > i) {
      // Python's csv module (non-strict) appends text after the closing quote to the cell.
      if (!opt_.lenient) {
        error_at(line_no, line, i, end - i, "csv-syntax", "unexpected text after the closing quote of a quoted cell");
        return false;
      }
      unquoted_.append(line.substr(i, end - i));
    }
    return true;
  }

  void read_cell(unsigned line_no, std::string_view line, std::string_view cell, std::size_t content_start,
                 std::vector<Action>& program) {
    Action fast;
    if (parse_canonical_plain(cell, fast)) {  // nearly every cell of a real file
      keep(program, in_dialect(fast));
      return;
    }
    // "3BW0": the full backward in PyTorch before 2.6.
    if (std::string_view digits = old_full_backward(cell);
        !digits.empty() && (opt_.dialect == ActionDialect::Pre26 || !opt_.lenient)) {
      if (opt_.dialect == ActionDialect::Pre26) {
        const std::string today =
            std::string(cell.substr(0, digits.size())) + "B" + std::string(cell.substr(digits.size() + 2));
        if (parse_canonical_plain(today, fast)) {
          keep(program, fast);
          return;
        }
      } else {
        if (!old_cell_)
          old_cell_ =
              OldCell{line_no, static_cast<std::uint32_t>(content_start + 1), std::string(cell), std::string(line)};
        program.push_back(Action::idle());
        return;
      }
    }
    CellParse parsed = parse_action_cell(cell, opt_.lenient, out_.schedule.sub_actions);
    if (parsed.issue) {
      bool warning = parsed.accepted;
      if (warning && ++warnings_ > opt_.max_warnings) {
        ++suppressed_warnings_;
      } else {
        std::size_t col0 = content_start + parsed.issue->offset;
        SourceLoc loc{name_, line_no, static_cast<std::uint32_t>(col0 + 1), {}};
        if (!warning && sink_.full()) {  // it would only be counted: skip its snippet and suggestion
          Diagnostic dropped;
          dropped.loc = std::move(loc);
          sink_.report(std::move(dropped));
        } else {
          sink_.report(
              cell_diagnostic(parsed, opt_.lenient, std::move(loc), make_snippet(line, col0, parsed.issue->length)));
        }
      }
    }
    keep(program, parsed.accepted ? in_dialect(parsed.action) : Action::idle());
  }

  // Appends an action to its rank's program and notes its kind, so that the dialect check needs
  // no pass of its own over a file without W.
  void keep(std::vector<Action>& program, Action a) {
    kinds_ |= 1u << static_cast<unsigned>(a.kind);
    program.push_back(a);
  }
  bool seen(ActionKind kind) const { return (kinds_ >> static_cast<unsigned>(kind) & 1) != 0; }

  // An action as today's names say it: under Pre26 a B is the input-gradient backward.
  Action in_dialect(Action a) const {
    if (opt_.dialect != ActionDialect::Pre26 || a.kind != ActionKind::B) return a;
    return Action::make(ActionKind::I, a.stage, a.microbatch());
  }

  // The stage digits of a cell spelled "<stage>BW<microbatch>", or empty.
  static std::string_view old_full_backward(std::string_view cell) {
    std::size_t i = 0;
    while (i < cell.size() && cell[i] >= '0' && cell[i] <= '9') ++i;
    if (i == 0 || cell.substr(i, 2) != "BW" || i + 2 == cell.size()) return {};
    for (std::size_t j = i + 2; j < cell.size(); ++j)
      if (cell[j] < '0' || cell[j] > '9') return {};
    return cell.substr(0, i);
  }

  // Under the current names, whether the file is in the old ones. A BW cell says so for sure: an
  // error. A B followed by a W of its stage and microbatch with no I anywhere (today a B already
  // holds the W) says so most likely, but PyTorch's own lowering tests write such files: a
  // warning. One finding either way, at the first such place; true for the error.
  bool refuse_old_dialect() {
    if (opt_.dialect != ActionDialect::Current) return false;
    std::optional<OldCell> at = old_cell_;
    if (!at) at = b_then_w();
    if (!at) return false;
    const bool certain = old_cell_.has_value();
    Diagnostic d;
    if (!certain) d.severity = Severity::Warning;
    d.rule = "action-dialect";
    d.loc = {name_, at->line, at->column, {}};
    d.message = fmt::format(
        "{}the action names of PyTorch before 2.6, where B was the input-gradient backward and BW the full backward "
        "(PyTorch 2.6 calls them I and B); pass --dialect pre-2.6 to read it so, and `ppsched compile --dialect "
        "pre-2.6 FILE -o NEW` writes it in today's names",
        certain
            ? fmt::format("'{}': this file uses ", at->cell)
            : fmt::format("'{}' follows a B of its stage and microbatch, and the file has no I: it looks written in ",
                          at->cell));
    if (!at->line_text.empty()) d.snippet = make_snippet(at->line_text, at->column - 1, at->cell.size());
    sink_.report(std::move(d));
    return certain;
  }

  std::string name_;
  const CsvReadOptions& opt_;
  DiagnosticSink& sink_;
  NulPosition nul_;
  ParsedSchedule out_;
  std::string unquoted_;
  std::size_t warnings_ = 0, suppressed_warnings_ = 0;
  std::uint32_t kinds_ = 0;  ///< bit 1 << kind for every kind read (containers' sub-actions aside)
  struct OldCell {
    unsigned line;
    std::uint32_t column;
    std::string cell, line_text;
  };
  std::optional<OldCell> old_cell_;  ///< the first BW cell, under the current names

  // The first W (rank order, then step order) whose stage and microbatch a B also has, when the
  // file has no I; nullopt otherwise. The B's are marked in a bitmap over the (stage, microbatch)
  // grid the file uses, one allocation however many there are: a set entry per B cost about a
  // third of validate's time on a 6M-action file (issue 48). A grid too sparse for a bitmap (a
  // stray microbatch far beyond the rest) falls back to one sorted array of the B's keys.
  std::optional<OldCell> b_then_w() const {
    if (seen(ActionKind::I) || !seen(ActionKind::B) || !seen(ActionKind::W)) return std::nullopt;
    const auto& ranks = out_.schedule.ranks;
    std::uint64_t stages = 0, microbatches = 0, bs = 0, ws = 0;
    for (const RankProgram& rank : ranks)
      for (const Action& a : rank.actions) {
        if (a.kind == ActionKind::I) return std::nullopt;
        if ((a.kind != ActionKind::B && a.kind != ActionKind::W) || !a.has_microbatch()) continue;
        ++(a.kind == ActionKind::B ? bs : ws);
        stages = std::max<std::uint64_t>(stages, a.stage + 1u);
        microbatches = std::max<std::uint64_t>(microbatches, a.microbatch() + std::uint64_t{1});
      }
    if (bs == 0 || ws == 0) return std::nullopt;
    const bool dense = stages * microbatches <= 64 * (bs + ws) + 4096;
    std::vector<std::uint64_t> marks;  // dense: bits by stage * microbatches + microbatch; else keys
    auto key = [&](const Action& a) { return std::uint64_t{a.stage} * microbatches + a.microbatch(); };
    if (dense) {
      marks.assign((stages * microbatches + 63) / 64, 0);
    } else {
      marks.reserve(bs);
    }
    for (const RankProgram& rank : ranks)
      for (const Action& a : rank.actions)
        if (a.kind == ActionKind::B && a.has_microbatch()) {
          if (dense) {
            marks[key(a) / 64] |= std::uint64_t{1} << (key(a) % 64);
          } else {
            marks.push_back(key(a));
          }
        }
    if (!dense) std::sort(marks.begin(), marks.end());
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      const auto& program = ranks[r].actions;
      for (std::size_t i = 0; i < program.size(); ++i) {
        const Action& a = program[i];
        if (a.kind != ActionKind::W || !a.has_microbatch()) continue;
        if (a.stage + 1u > stages || a.microbatch() >= microbatches) continue;
        const bool after_b = dense ? (marks[key(a) / 64] >> (key(a) % 64) & 1) != 0
                                   : std::binary_search(marks.begin(), marks.end(), key(a));
        if (after_b)
          return OldCell{out_.source.line(r), out_.source.column(r, i), action_text(a, out_.schedule.sub_actions), {}};
      }
    }
    return std::nullopt;
  }
};

}  // namespace

std::optional<ParsedSchedule> read_pytorch_csv(const std::string& path, const CsvReadOptions& opt,
                                               DiagnosticSink& sink) {
  std::string name = display_name(path);
  try {
    CsvScheduleReader reader(name, opt, sink);
    auto source = std::make_unique<CheckedSource>(open_input(path), name, reader.nul());
    return reader.run(std::move(source));
  } catch (const IoError& e) {
    sink.report(io_diagnostic(e));
    return std::nullopt;
  }
}

std::optional<ParsedSchedule> read_pytorch_csv_text(std::string_view name, std::string_view text,
                                                    const CsvReadOptions& opt, DiagnosticSink& sink) {
  CsvScheduleReader reader(std::string(name), opt, sink);
  return reader.run(std::make_unique<CheckedSource>(text, reader.nul()));
}

}  // namespace ppsched
