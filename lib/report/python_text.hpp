// Python source text from values that may be the user's (a model name, a schedule's path, a
// comment): every Python file ppsched writes builds its literals and comments here, so no value
// can end its string or its comment line, and the file stays valid UTF-8 whatever the value held.
//
//   python_string("a\"b\n")       -> "\"a\\\"b\\n\""   a double-quoted literal, escaped
//   python_string("\xff.csv")     -> "\"\\udcff.csv\""  a byte that is not UTF-8: Python's
//                                                       surrogateescape, so os.fsencode() of the
//                                                       value gives the same bytes back (a path
//                                                       still names its file)
//   python_comment("x\ny = 1")    -> "# x\\x0Ay = 1\n"  one line (io/log_text.hpp's printable)
//
// Not for identifiers: is_python_identifier and is_python_module_name check names that go into
// the code unquoted.
#pragma once

#include <string>
#include <string_view>

namespace ppsched {

/// `s` as a Python 3 string literal, quotes included. Escaped: '"' and '\', controls (\n \r \t,
/// the rest of C0, DEL and C1 as \xHH), the invisible characters that reorder or break lines
/// (bidirectional controls, U+2028, U+2029, U+FEFF) as \uXXXX, and each byte that is not UTF-8
/// as \udcHH. Other text, ASCII or UTF-8, is kept as it is.
std::string python_string(std::string_view s);

/// "# " + `text` made printable (one line, no control character, valid UTF-8) + "\n". A file must
/// not start with one: Python reads an encoding from a comment on its first two lines.
std::string python_comment(std::string_view text);

/// A Python identifier in ASCII that is not a keyword: `llama3_70b`.
bool is_python_identifier(std::string_view name);

/// Identifiers joined by dots: `torchtitan.models.llama3.config_registry`.
bool is_python_module_name(std::string_view name);

}  // namespace ppsched
