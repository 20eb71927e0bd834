// PyTorch's pipeline schedule CSV: read and write, both `compute_only` and `compute_comms`.
//
// The format (what `_dump_csv` writes and `_load_csv` reads): row r is rank r's program, no
// header, `,` between cells, one action per cell in PyTorch's text form (ir/action_text.hpp),
// an empty cell for an idle step, ragged rows, a blank line for a rank with no actions.
//
// Reading accepts LF or CRLF, a UTF-8 BOM, a missing final newline and RFC 4180 quoted cells
// (a quoted cell may not span lines: no action contains a newline). It is strict by default:
// each cell must be canonical; `lenient` accepts what PyTorch's parser accepts and warns.
// Every problem is reported as file:line:col with the line and a caret. Limits: a line of at
// most 16 MiB (the block of fast-cpp-csv-parser's LineReader, whose line cutting the reader keeps), at
// most kMaxCsvRanks rows, no NUL bytes.
//
// Writing is byte-identical to PyTorch's `csv.writer`: CRLF, nothing quoted, except that a row
// holding one idle cell is written `""` as Python's csv module does.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "diag/diagnostic.hpp"
#include "io/byte_sink.hpp"
#include "ir/schedule.hpp"
#include "ir/step_timelines.hpp"

namespace ppsched {

inline constexpr std::size_t kMaxCsvRanks = 65536;

/// Which PyTorch's action names a file uses. PyTorch 2.6 renamed them (pytorch/pytorch#138886):
/// before, B was the input-gradient backward (today's I) and BW the full backward (today's B).
enum class ActionDialect : std::uint8_t { Current, Pre26 };

struct CsvReadOptions {
  bool lenient = false;
  /// Non-canonical cells reported one by one in lenient mode; the rest are summed up in one note.
  std::size_t max_warnings = 10;
  /// Pre26: read B as I and BW as B. Current: a file in the old names is refused with one error
  /// that says so (a BW cell, or a B and a W of one stage and microbatch and no I anywhere).
  ActionDialect dialect = ActionDialect::Current;
  /// A regular file (or text) of this many bytes or more is read by two threads, one a half, when
  /// the machine has two cores: the result is the same. 0: every file so, whatever the cores (tests).
  std::uint64_t split_from_bytes = std::uint64_t{4} << 20;
};

/// A schedule read from a file, with where each action came from.
struct ParsedSchedule {
  Schedule schedule;
  SourceMap source;
  /// infer_shape(schedule), gathered row by row as the reader read them; nullopt when the reader
  /// did not (then infer_shape finds it).
  std::optional<InferredShape> shape;
};

/// Reads a CSV file ("-" for standard input). Problems go to `sink`; nullopt if any is an error.
std::optional<ParsedSchedule> read_pytorch_csv(const std::string& path, const CsvReadOptions& opt,
                                               DiagnosticSink& sink);
/// Reads CSV text held in memory; `name` is used in messages.
std::optional<ParsedSchedule> read_pytorch_csv_text(std::string_view name, std::string_view text,
                                                    const CsvReadOptions& opt, DiagnosticSink& sink);

enum class LineEnding { Crlf, Lf };

struct CsvWriteOptions {
  LineEnding line_ending = LineEnding::Crlf;
};

void write_pytorch_csv(const Schedule& s, ByteSink& out, const CsvWriteOptions& opt = {});
std::string to_pytorch_csv(const Schedule& s, const CsvWriteOptions& opt = {});
/// The CSV of the timelines that `waits` puts on the ranks of `programs` (a dry run's,
/// ir/step_timelines.hpp): byte for byte write_pytorch_csv of those timelines, without building them.
void write_pytorch_csv(const Schedule& programs, const StepWaits& waits, ByteSink& out,
                       const CsvWriteOptions& opt = {});

}  // namespace ppsched
