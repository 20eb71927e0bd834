// Diagnostics as data: what readers, passes and checks report, until app/ prints them.
//
// A Diagnostic is {severity, rule id, location, message, notes}. It also carries a short
// snippet of the source line (a window, never a whole 16 MiB row) with the caret position,
// so that rendering needs no access to the file. Rendering lives in render.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ppsched {

enum class Severity : std::uint8_t { Note, Warning, Error };
std::string_view severity_name(Severity s);  // "note", "warning", "error"

/// A place in an input. line and column are 1-based byte positions; 0 means unknown.
/// For JSON input `path` holds a JSON pointer-like path ("$.programs[1][3]") instead.
struct SourceLoc {
  std::string file;
  std::uint32_t line = 0;
  std::uint32_t column = 0;
  std::string path;
};

/// A window of one source line, printable as is, with the caret span inside it.
struct Snippet {
  std::string text;          ///< empty when there is nothing to show
  std::uint32_t caret = 0;   ///< 0-based byte offset of the caret within text
  std::uint32_t length = 1;  ///< caret span (>= 1)
};

/// Cuts a window of at most `width` bytes around [column0, column0+length) of `line`,
/// marks cut ends with "...", and replaces bytes that are not printable ASCII by '?' so that
/// the caret stays aligned on any terminal.
Snippet make_snippet(std::string_view line, std::size_t column0, std::size_t length, std::size_t width = 100);

struct Note {
  SourceLoc loc;
  std::string message;
  Snippet snippet;
};

struct Diagnostic {
  Severity severity = Severity::Error;
  std::string rule;  ///< stable kebab-case id, e.g. "action-syntax"
  SourceLoc loc;
  std::string message;
  Snippet snippet;
  std::vector<Note> notes;
};

/// Collects diagnostics in order and counts them. A producer asks `full()` to stop early
/// on inputs with thousands of errors (the count of dropped errors is kept and reported).
class DiagnosticSink {
 public:
  explicit DiagnosticSink(std::size_t max_errors = 50) : max_errors_(max_errors) {}

  void report(Diagnostic d);
  const std::vector<Diagnostic>& diagnostics() const { return items_; }
  std::size_t error_count() const { return errors_; }
  std::size_t warning_count() const { return warnings_; }
  std::size_t dropped_errors() const { return dropped_; }
  bool has_errors() const { return errors_ > 0; }
  bool full() const { return errors_ >= max_errors_; }

 private:
  std::vector<Diagnostic> items_;
  std::size_t max_errors_;
  std::size_t errors_ = 0, warnings_ = 0, dropped_ = 0;
};

}  // namespace ppsched
