// What every subcommand shares at the edge: printing diagnostics (colour only on a terminal,
// NO_COLOR honoured) and writing an output file safely.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "diag/diagnostic.hpp"
#include "io/byte_sink.hpp"

namespace ppsched::cli {
struct MemoryModelOptions;  // app/sim_inputs.hpp
}

namespace ppsched::cli {

/// Prints the sink's diagnostics to standard error.
void print_diagnostics(const DiagnosticSink& sink);

/// Prints "ppsched: error: <message>" to standard error.
void print_error(const std::string& message);
/// While one is alive, print_error and print_diagnostics also keep what they print (without the
/// "ppsched: error: " prefix and without colour): for a command whose output document must carry
/// the error that stopped it (validate's SARIF and JSON logs). One at a time.
class ErrorLog {
 public:
  ErrorLog();
  ~ErrorLog();
  ErrorLog(const ErrorLog&) = delete;
  ErrorLog& operator=(const ErrorLog&) = delete;
  const std::vector<std::string>& messages() const { return messages_; }

 private:
  friend void print_error(const std::string& message);
  friend void print_diagnostics(const DiagnosticSink& sink);
  std::vector<std::string> messages_;
};

/// Prints "ppsched: warning: <message>" to standard error.
void print_warning(const std::string& message);
/// Prints "ppsched: note: <message>" to standard error.
void print_note(const std::string& message);

/// Writes a report to standard output through the log guard (io/log_text.hpp): no line of it
/// starts a workflow command or carries a terminal escape.
void print_stdout(std::string_view text);
/// Writes GitHub annotations ppsched built itself (report/validate_formats.hpp), as they are:
/// the one output that may start a line with "::".
void print_annotations(std::string_view text);

/// Checks for a numeric flag: a finite number > 0, or >= 0. CLI11's PositiveNumber and
/// NonNegativeNumber let NaN and infinity through, and state their range as "0 to" the largest
/// double written out in 309 digits.
CLI::Validator finite_positive();
CLI::Validator finite_non_negative();
/// A number in [lo, hi]; CLI11's Range lets NaN through (every comparison with it is false).
CLI::Validator finite_in(double lo, double hi);
/// A transform for sizes in bytes: "80GiB", "75 GB", "1.5TiB" become their number of bytes; a plain
/// number passes through to the option's own check. `unit_given`, when set, records whether the
/// last value had a suffix.
CLI::Validator byte_suffixes(std::shared_ptr<bool> unit_given = nullptr);
/// The units of a memory cap of `sub`, one rule for simulate, validate and tune: bytes with a
/// suffix (80GiB, 75GB); a count of activations spelled as such, `8slots` (PyTorch's activation
/// slots, one per stage and microbatch) or `4microbatches` (per microbatch), which selects
/// `memory_model`'s pytorch-liveness at that granularity (contradicting flags are refused); or a
/// plain number in the memory model's own unit. While --model prices a rank in bytes, a plain
/// number ("80", 80 bytes) is refused at parse time (exit 2) unless --memory-model
/// pytorch-liveness makes it a count of slots.
CLI::Validator memory_cap_size(CLI::App& sub, const std::string& cap_option, MemoryModelOptions& memory_model);

/// Appends `markdown` to $GITHUB_STEP_SUMMARY, the step's Markdown summary, when GitHub Actions
/// sets it; warns when it cannot.
void append_step_summary(const std::string& markdown);

/// What the command is doing now ("synthesizing 1F1B for 1000 ranks ...", "writing out.csv"), for
/// the one message main prints when memory runs out: set by the command's big steps, copied into
/// a fixed buffer so that reading it back allocates nothing. `doing()` is empty until set.
void set_doing(std::string_view what);
const char* doing();

/// Writes an output through OutputFile (atomic for regular files, "-" = stdout).
/// Throws IoError; BrokenPipe when the reader of stdout went away.
void write_output(const std::string& path, const std::function<void(ByteSink&)>& produce);

/// Writes a set of outputs so that they are all new or all old afterwards (commit_together in
/// io/output_file.hpp): each is produced in full, then all are renamed into place.
void write_outputs_together(const std::vector<std::pair<std::string, std::function<void(ByteSink&)>>>& outputs);

}  // namespace ppsched::cli
