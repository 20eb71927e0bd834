#include "report/python_text.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

#include "io/log_text.hpp"

namespace ppsched {

namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_escape(std::string& out, char kind, std::uint32_t value, int digits) {
  out += '\\';
  out += kind;
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) out += kHex[(value >> shift) & 15];
}

// Characters a reader does not see but an editor or the tokenizer acts on: the bidirectional
// controls (the "trojan source" reorderings), the Unicode line breaks and the byte-order mark.
bool invisible(std::uint32_t cp) {
  return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E || cp == 0x200F ||
         cp == 0x061C || cp == 0x2028 || cp == 0x2029 || cp == 0xFEFF;
}

}  // namespace

std::string python_string(std::string_view s) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::uint32_t cp = 0;
    const std::size_t n = utf8_at(s, i, cp);
    if (n == 0) {
      append_escape(out, 'u', 0xDC00u + c, 4);  // what Python's surrogateescape decodes the byte to
      ++i;
      continue;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) {
      append_escape(out, 'x', cp, 2);
    } else if (invisible(cp)) {
      append_escape(out, 'u', cp, 4);
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out + "\"";
}

std::string python_comment(std::string_view text) { return "# " + printable(text) + "\n"; }

bool is_python_identifier(std::string_view name) {
  // Python 3.12's hard keywords; the soft ones (match, case, type, _) may name a function.
  static constexpr std::array<std::string_view, 35> kKeywords = {
      "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
      "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
      "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
      "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  const bool word = std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
  return word && std::find(kKeywords.begin(), kKeywords.end(), name) == kKeywords.end();
}

bool is_python_module_name(std::string_view name) {
  for (std::size_t start = 0;;) {
    const std::size_t dot = name.find('.', start);
    if (!is_python_identifier(name.substr(start, dot - start))) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

}  // namespace ppsched
