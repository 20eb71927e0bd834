// TOML values and comments from text that may be the user's (a path, a runtime file's hardware
// string): every emitted config goes through these, so no value can close its string, start a
// key or a table, or make the file invalid.
//
//   toml_string("a\"b\n")      -> "\"a\\\"b\\n\""     a basic string, escaped as TOML 1.0 says
//   toml_string("\xff")        -> throws UserError   TOML is UTF-8: such a value is refused
//   toml_comment("x\n[t]")     -> "# x\\x0A[t]\n"    one line, controls shown (io/log_text.hpp)
#pragma once

#include <string>
#include <string_view>

namespace ppsched {

/// `s` as a TOML basic string, quotes included: '"' and '\' backslash-escaped, \b \t \n \f \r,
/// other control characters and DEL as \uXXXX. Throws UserError naming `what` when `s` is not
/// UTF-8, which no TOML string can hold.
std::string toml_string(std::string_view s, std::string_view what = "a value");

/// "# " + `text` made printable (one line, no control character, valid UTF-8) + "\n".
std::string toml_comment(std::string_view text);

}  // namespace ppsched
