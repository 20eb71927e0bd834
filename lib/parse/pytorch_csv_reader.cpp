// Reading PyTorch's schedule CSV. Lines are cut in csv_lines.hpp; cells are split here because rows
// are ragged and empty cells mean something, which fast-cpp-csv-parser's CSVReader<N> cannot express.
//
// A large regular file is read by two threads (issue 48): the calling thread reads the first half
// in full, as it always did, while a second thread cuts the lines of the second half and parses
// every row whose cells are all canonical (nearly every row of a real file). The calling thread
// then takes those rows in order, and reads in full, from the file again, each row the second
// thread could not parse alone. Every diagnostic is so made by one thread in file order, and the
// result is the same byte for byte as one thread's.
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "io/byte_sink.hpp"
#include "io/input_file.hpp"
#include "ir/action_text.hpp"
#include "ir/canonical_action.hpp"
#include "parse/cell_diagnostics.hpp"
#include "parse/csv_lines.hpp"
#include "parse/io_diagnostic.hpp"
#include "parse/pytorch_csv.hpp"

namespace ppsched {

namespace {

constexpr std::size_t kRowDone = std::string_view::npos;

// An action as today's names say it: under Pre26 a B is the input-gradient backward.
Action in_dialect(ActionDialect dialect, Action a) {
  if (dialect != ActionDialect::Pre26 || a.kind != ActionKind::B) return a;
  return Action::make(ActionKind::I, a.stage, a.microbatch());
}

// A row's arrays are sized once, for as many cells as the line can hold but for empty ones (each
// other cell takes at least two bytes with its comma): pages reserved and never written cost no
// memory, and growing the arrays by doubling copied each 10M-action file about twice and touched
// twice the fresh memory. Counting the commas instead was a second pass over every line, 3-6 ms
// of validate's 0.13 s on the 6.2M-action file (docs/bench.md). A row of mostly empty cells (a
// dry run's timelines read back) may still grow.
void reserve_row(std::string_view line, std::vector<Action>& program, StepColumns& columns) {
  const std::size_t cells = line.size() / 2 + 1;
  program.reserve(cells);
  columns.reserve(cells);
}

// Reads the canonical cells of a non-empty `line` from `pos`, the start of a cell, into `program`
// and `columns` (1-based), or-ing 1 << kind into `kinds` for each: nearly every cell of a real file,
// parsed and split in one pass. Returns kRowDone when the row is complete, else the start of the
// first cell that needs more (quoted, non-canonical, an error), read by the caller.
std::size_t read_canonical_cells(std::string_view line, std::size_t pos, ActionDialect dialect,
                                 std::vector<Action>& program, StepColumns& columns, std::uint32_t& kinds,
                                 ShapeGatherer::Rank& shape) {
  const char* const line_end = line.data() + line.size();
  for (;;) {
    Action fast = Action::idle();  // an empty cell: an idle step
    const char* stop = line[pos] == ','   ? line.data() + pos
                       : line[pos] == '"' ? nullptr
                                          : canonical::parse_prefix(line.data() + pos, line_end, fast);
    if (!stop || (stop != line_end && *stop != ',')) return pos;
    fast = in_dialect(dialect, fast);
    kinds |= 1u << static_cast<unsigned>(fast.kind);
    shape.add(fast);
    program.push_back(fast);
    columns.push_back(static_cast<std::uint32_t>(pos + 1));
    if (stop == line_end) return kRowDone;
    pos = static_cast<std::size_t>(stop - line.data()) + 1;  // past the ','
    if (pos == line.size()) {                                // a trailing comma leaves an empty (idle) last cell
      program.push_back(Action::idle());
      columns.push_back(static_cast<std::uint32_t>(pos + 1));
      return kRowDone;
    }
  }
}

// What the second thread makes of the second half of a file: each row parsed when all its cells are
// canonical (`clean`), else only where it is, for the calling thread to read in full.
struct SecondHalf {
  struct Row {
    std::uint64_t offset = 0;  ///< of the line's first byte in the file
    std::uint32_t length = 0;  ///< without its '\n' (and '\r')
    bool clean = false;
  };
  std::vector<Row> rows;
  std::vector<std::vector<Action>> programs;  ///< by row; empty for a row that is not clean
  std::vector<StepColumns> columns;           ///< by row, as programs
  std::uint32_t kinds = 0;                    ///< of the clean rows' actions
  ShapeGatherer shape;                        ///< of the rows' canonical cells, numbered from 0
  bool too_long = false;                      ///< the rows stop at a line over the limit
  std::exception_ptr error;                   ///< a failed read

  // Up to one row past the limit on rows, so that the calling thread reports it where it is.
  void scan(CsvByteSource source, std::uint64_t base, ActionDialect dialect, const std::atomic<bool>& stop) {
    try {
      LineSplitter lines(source, /*skip_bom=*/false);
      std::string_view raw;
      while (!stop.load(std::memory_order_relaxed) && rows.size() <= kMaxCsvRanks) {
        const LineSplitter::Status status = lines.next(raw);
        if (status == LineSplitter::Status::End) break;
        if (status == LineSplitter::Status::TooLong) {
          too_long = true;
          break;
        }
        Row row{base + lines.line_offset(), static_cast<std::uint32_t>(raw.size()), true};
        auto& program = programs.emplace_back();
        auto& cols = columns.emplace_back();
        std::uint32_t row_kinds = 0;
        if (!raw.empty()) {
          reserve_row(raw, program, cols);
          // A row that is not clean is read again by the calling thread as the same rank: what
          // was gathered of it here is a part of what that reading gathers.
          ShapeGatherer::Rank row_shape(shape, static_cast<std::uint32_t>(rows.size()));
          row.clean = read_canonical_cells(raw, 0, dialect, program, cols, row_kinds, row_shape) == kRowDone;
          row_shape.done();
        }
        if (row.clean) {
          kinds |= row_kinds;
        } else {
          program = {};
          cols = {};
        }
        rows.push_back(row);
      }
    } catch (...) {
      error = std::current_exception();
    }
  }
};

// Where a reader's bytes come from: a descriptor (a regular file of `size` bytes, or a stream) or
// text in memory.
struct CsvInput {
  int fd = -1;
  bool regular = false;
  std::uint64_t size = 0;
  std::string_view text;
  bool is_text = false;
};

class CsvScheduleReader {
 public:
  CsvScheduleReader(std::string name, const CsvReadOptions& opt, DiagnosticSink& sink)
      : name_(std::move(name)), opt_(opt), sink_(sink) {
    out_.source.file = name_;
  }

  std::optional<ParsedSchedule> run(const CsvInput& in) {
    input_ = &in;
    const bool whole = in.is_text || in.regular;
    const std::uint64_t size = in.is_text ? in.text.size() : in.size;
    std::uint64_t split = size;
    if (whole && size > 0 &&
        (opt_.split_from_bytes == 0 || (size >= opt_.split_from_bytes && std::thread::hardware_concurrency() > 1)))
      split = in.is_text ? split_after_middle_newline(in.text) : split_after_middle_newline(in.fd, name_, size);
    SecondHalf second;
    std::atomic<bool> stop{false};
    std::thread worker;
    // Joined before anything leaves run(), an exception too: a thread left running ends the process.
    struct Joiner {
      std::thread& thread;
      std::atomic<bool>& stop;
      ~Joiner() {
        stop = true;
        if (thread.joinable()) thread.join();
      }
    } joiner{worker, stop};
    if (split < size)
      worker = std::thread([&second, &stop, &in, split, size, this] {
        second.scan(source_for(in, split, size), split, opt_.dialect, stop);
      });
    Flow flow = read_first_half(source_for(in, 0, split));
    stop = flow != Flow::Go;
    if (worker.joinable()) worker.join();
    if (second.error) std::rethrow_exception(second.error);
    if (flow == Flow::Go && split < size) flow = take_second_half(second);
    if (flow == Flow::Fail) return std::nullopt;
    if (flow == Flow::Go) out_.shape = shape_.result();  // every row was gathered
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
  // Go: read on; Stop: the sink is full, the rest is not read; Fail: an error that ends the reading.
  enum class Flow { Go, Stop, Fail };

  // Bytes [begin, end) of the input; [0, size) is all of it, from a stream too.
  CsvByteSource source_for(const CsvInput& in, std::uint64_t begin, std::uint64_t end) const {
    if (in.is_text) return CsvByteSource(in.text.substr(begin, end - begin));
    if (!in.regular) return CsvByteSource(in.fd, name_);
    return CsvByteSource(in.fd, name_, begin, end);
  }

  Flow read_first_half(CsvByteSource source) {
    LineSplitter lines(source, /*skip_bom=*/true);
    std::string_view raw;
    for (;;) {
      const LineSplitter::Status status = lines.next(raw);
      if (status == LineSplitter::Status::End) return Flow::Go;
      if (status == LineSplitter::Status::TooLong) return too_long();
      bom_ = lines.skipped_bom();
      const Flow flow = take_line(raw);
      if (flow != Flow::Go) return flow;
    }
  }

  // The second thread's rows, in order: a clean one as it parsed it, any other read here in full.
  Flow take_second_half(SecondHalf& second) {
    kinds_ |= second.kinds;
    shape_.merge(second.shape, static_cast<std::uint32_t>(out_.schedule.ranks.size()));
    std::string line;
    for (std::size_t i = 0; i < second.rows.size(); ++i) {
      const SecondHalf::Row& row = second.rows[i];
      if (!row.clean) {
        line.resize(row.length);
        reread(row.offset, line);
        const Flow flow = take_line(line);
        if (flow != Flow::Go) return flow;
        continue;
      }
      const auto line_no = static_cast<unsigned>(out_.schedule.ranks.size() + 1);
      if (out_.schedule.ranks.size() == kMaxCsvRanks) return too_many_rows(line_no, {});
      out_.schedule.ranks.push_back(RankProgram{std::move(second.programs[i])});
      out_.source.step_column.push_back(std::move(second.columns[i]));
      out_.source.rank_line.push_back(line_no);
    }
    return second.too_long ? too_long() : Flow::Go;
  }

  // The bytes of a line the second thread found, again.
  void reread(std::uint64_t offset, std::string& line) const {
    if (input_->is_text) {
      line.assign(input_->text.substr(offset, line.size()));
      return;
    }
    CsvByteSource source(input_->fd, name_, offset, offset + line.size());
    if (static_cast<std::size_t>(source.read(line.data(), static_cast<int>(line.size()))) != line.size())
      throw IoError(name_, "cannot read: the file changed while it was read");
  }

  // One line, the next rank's row.
  Flow take_line(std::string_view raw) {
    const auto line_no = static_cast<unsigned>(out_.schedule.ranks.size() + 1);
    if (out_.schedule.ranks.size() == kMaxCsvRanks) return too_many_rows(line_no, raw);
    if (!read_row(line_no, raw)) return Flow::Fail;
    if (sink_.full()) {
      Diagnostic d;
      d.severity = Severity::Note;
      d.loc = {name_, line_no, 0, {}};
      d.message = "too many errors; stopped reading here";
      sink_.report(std::move(d));
      return Flow::Stop;
    }
    return Flow::Go;
  }

  Flow too_many_rows(unsigned line_no, std::string_view raw) {
    error_at(line_no, raw, 0, 1, "csv-limit",
             "more than " + std::to_string(kMaxCsvRanks) +
                 " rows: each row is a rank, and ppsched supports at most that many ranks");
    return Flow::Fail;
  }

  Flow too_long() {
    Diagnostic d;
    d.rule = "csv-limit";
    d.loc = {name_, static_cast<unsigned>(out_.schedule.ranks.size() + 1), 1, {}};
    d.message = "line is longer than 16 MiB, ppsched's limit for one rank's row";
    sink_.report(std::move(d));
    return Flow::Fail;
  }

  void error_at(unsigned line_no, std::string_view line, std::size_t col0, std::size_t len, std::string_view rule,
                std::string message) {
    Diagnostic d;
    d.rule = std::string(rule);
    d.loc = {name_, line_no, static_cast<std::uint32_t>(col0 + 1), {}};
    d.message = std::move(message);
    if (!sink_.full()) d.snippet = make_snippet(line, col0, len);  // a full sink only counts it
    sink_.report(std::move(d));
  }

  // Reads a row, its canonical cells fast and any other cell in full; false, having said so, when
  // it holds a NUL byte (only a cell that is not canonical can).
  bool read_row(unsigned line_no, std::string_view line) {
    auto& program = out_.schedule.ranks.emplace_back().actions;
    auto& columns = out_.source.step_column.emplace_back();
    out_.source.rank_line.push_back(line_no);
    if (line.empty()) return true;  // a blank line is a rank with no actions
    reserve_row(line, program, columns);
    ShapeGatherer::Rank shape(shape_, line_no - 1);
    std::size_t pos = read_canonical_cells(line, 0, opt_.dialect, program, columns, kinds_, shape);
    shape.done();
    if (pos == kRowDone) return true;
    const bool read = read_rest_of_row(line_no, line, pos, program, columns);
    shape_.add_rank(line_no - 1, program, out_.schedule.sub_actions);  // its other cells, containers too
    return read;
  }

  // read_row from `pos`, the first cell that is not canonical.
  bool read_rest_of_row(unsigned line_no, std::string_view line, std::size_t pos, std::vector<Action>& program,
                        StepColumns& columns) {
    ShapeGatherer::Rank shape(shape_, line_no - 1);  // read_row gathers the whole row afterwards
    if (const void* nul = std::memchr(line.data() + pos, 0, line.size() - pos)) {
      const auto at = static_cast<std::size_t>(static_cast<const char*>(nul) - line.data());
      // The column counts a skipped BOM on the first line, as LineReader's byte count does.
      error_at(line_no, line.substr(0, at), at + (line_no == 1 && bom_ ? 3 : 0), 1, "csv-syntax",
               "NUL byte in input: a schedule CSV is text");
      return false;
    }
    for (;;) {
      const std::size_t cell_start = pos;
      std::size_t end;  // where the cell ends: its ',' or the line's end
      std::string_view cell;
      std::size_t content_start = pos;  // where the cell's text starts in the line
      if (line[pos] == '"') {
        if (!read_quoted(line_no, line, pos, end)) return true;
        cell = unquoted_;
        content_start = pos + 1;
      } else {
        end = line.find(',', pos);
        if (end == std::string_view::npos) end = line.size();
        cell = line.substr(pos, end - pos);
      }
      read_cell(line_no, line, cell, content_start, program);
      columns.push_back(static_cast<std::uint32_t>(cell_start + 1));
      if (sink_.full() || end >= line.size()) return true;  // only a cell read here can report
      pos = end + 1;                                        // past the ','
      if (pos == line.size()) {                             // a trailing comma leaves an empty (idle) last cell
        program.push_back(Action::idle());
        columns.push_back(static_cast<std::uint32_t>(pos + 1));
        return true;
      }
      pos = read_canonical_cells(line, pos, opt_.dialect, program, columns, kinds_, shape);
      if (pos == kRowDone) return true;
    }
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

  Action in_dialect(Action a) const { return ppsched::in_dialect(opt_.dialect, a); }

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
  const CsvInput* input_ = nullptr;
  bool bom_ = false;  ///< the first line began with a BOM
  ParsedSchedule out_;
  std::string unquoted_;
  std::size_t warnings_ = 0, suppressed_warnings_ = 0;
  std::uint32_t kinds_ = 0;  ///< bit 1 << kind for every kind read (containers' sub-actions aside)
  ShapeGatherer shape_;      ///< of every row read so far
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
    CsvInput in;
    in.fd = open_input(path);
    struct Closer {
      int fd;
      ~Closer() { ::close(fd); }
    } closer{in.fd};
    struct stat st {};
    in.regular = ::fstat(in.fd, &st) == 0 && S_ISREG(st.st_mode) && path != "-";
    in.size = in.regular ? static_cast<std::uint64_t>(st.st_size) : 0;
    CsvScheduleReader reader(name, opt, sink);
    return reader.run(in);
  } catch (const IoError& e) {
    sink.report(io_diagnostic(e));
    return std::nullopt;
  }
}

std::optional<ParsedSchedule> read_pytorch_csv_text(std::string_view name, std::string_view text,
                                                    const CsvReadOptions& opt, DiagnosticSink& sink) {
  CsvInput in;
  in.text = text;
  in.is_text = true;
  CsvScheduleReader reader(std::string(name), opt, sink);
  return reader.run(in);
}

}  // namespace ppsched
