#include "report/toml_text.hpp"

#include <fmt/format.h>

#include "io/log_text.hpp"
#include "ir/user_error.hpp"

namespace ppsched {

std::string toml_string(std::string_view s, std::string_view what) {
  if (!is_utf8(s))
    throw UserError(fmt::format("{} '{}' is not UTF-8, and a TOML file cannot hold it", what, printable(s)));
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7F)
          out += fmt::format("\\u{:04X}", c);
        else
          out += ch;
    }
  }
  return out + "\"";
}

std::string toml_comment(std::string_view text) { return "# " + printable(text) + "\n"; }

}  // namespace ppsched
