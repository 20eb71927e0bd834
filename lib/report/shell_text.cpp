#include "report/shell_text.hpp"

#include <algorithm>
#include <stdexcept>

#include "io/log_text.hpp"
#include "ir/user_error.hpp"

namespace ppsched {

namespace {

// Characters sh gives no meaning in any position of a word after the command name: '=' is left
// out (a first word NAME=x would be an assignment), '~' (tilde expansion at the start) and '#'
// (a comment at the start) too.
bool plain(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.' || c == '/' || c == ':' || c == ',' || c == '+' || c == '@' || c == '%';
}

bool variable_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

}  // namespace

std::string shell_quote(std::string_view word) {
  if (word.find('\0') != std::string_view::npos)
    throw UserError("the argument '" + printable(word) + "' holds a NUL byte, which no command line can pass");
  if (!word.empty() && std::all_of(word.begin(), word.end(), plain)) return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'')
      out += "'\\''";  // close, an escaped quote, reopen
    else
      out += c;
  }
  return out + "'";
}

std::string shell_command(const std::vector<std::string>& args) {
  std::string out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i > 0) out += ' ';
    out += shell_quote(args[i]);
  }
  return out;
}

std::string shell_assignment(std::string_view name, std::string_view value) {
  if (!variable_name(name)) throw std::invalid_argument("shell_assignment: not a variable name");
  return std::string(name) + "=" + shell_quote(value);
}

std::string shell_comment(std::string_view text) { return "# " + printable(text) + "\n"; }

}  // namespace ppsched
