// Text that is safe to put in a log or on a terminal: the CI-safety rule's one home.
//
// ppsched runs on pull requests, so a file name, a cell, a JSON key or a stage name is an
// attacker's text. A GitHub runner executes a log line that starts (after blanks) with "::"
// ("::add-mask::", "::stop-commands::", "::error ...::"), and the legacy "##[command]" form
// anywhere in a line; a terminal obeys ESC sequences. So:
//
//   printable("a\x1b[2Jb")      -> "a\x1B[2Jb"       control bytes shown as \xHH (tab kept)
//   printable("x##[add-mask]")  -> "x##\x5Badd-mask]"
//   printable_line("::stop")    -> "\x3A:stop"       a value that starts a line
//   display_path("::a.csv")     -> "./::a.csv"       a relative path that starts a line
//
// Escaped: C0 controls but tab (newline and CR too: a value is one line), DEL, C1 controls
// (U+0080..U+009F), the bidirectional overrides (U+202A..U+202E, U+2066..U+2069), and bytes
// that are not UTF-8. LogGuard applies the same rule to a stream of lines (stdout, stderr):
// it keeps newlines and CRLF, escapes every other control and neutralises each line's start.
// Only a GitHub annotation ppsched built itself (report/validate_formats.cpp) bypasses it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ppsched {

/// Appends `text` with every byte that could act on a terminal or a CI log shown visibly.
void append_printable(std::string& out, std::string_view text);
std::string printable(std::string_view text);
/// printable(), and a leading "::" (after blanks) escaped as "\x3A:": for text that starts a line.
std::string printable_line(std::string_view text);
/// A path for the start of a line: printable, and "./" before a relative path that would start
/// the line with "::" or blanks (still the same file, and no workflow command).
std::string display_path(std::string_view path);
/// True when `text` is UTF-8 (no overlong forms, no surrogates).
bool is_utf8(std::string_view text);
/// The length of the UTF-8 sequence that starts at text[i] (1 to 4), its code point in `cp`; 0
/// when the bytes there are not UTF-8 (a stray byte, a cut sequence, an overlong form, a
/// surrogate). For escapers of other languages' strings (report/python_text.hpp).
std::size_t utf8_at(std::string_view text, std::size_t i, std::uint32_t& cp);
/// True when a line (after blanks) starts with "::", a workflow command to a GitHub runner.
bool starts_workflow_command(std::string_view line);

/// The rule for a stream: feed bytes as they come, then finish(). Allocates nothing per byte.
class LogGuard {
 public:
  void feed(std::string_view in, std::string& out);
  /// Emits what is held back (a lone ':' or CR at the end).
  void finish(std::string& out);

 private:
  bool line_start_ = true;  // only blanks since the last newline
  bool colon_ = false;      // one ':' held at a line start
  bool cr_ = false;         // a CR held: kept before LF, escaped otherwise
  bool c2_ = false;         // a 0xC2 held: U+0080..U+009F are C1 controls
  int hashes_ = 0;          // '#' in a row, for "##["
};

/// `text` through a fresh LogGuard: for a whole message (stderr lines, CLI11's errors).
std::string guarded(std::string_view text);

}  // namespace ppsched
