#include "io/log_text.hpp"

#include <cstdint>

namespace ppsched {

namespace {

constexpr char kHex[] = "0123456789ABCDEF";

void append_hex(std::string& out, unsigned char c) {
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

void append_u(std::string& out, std::uint32_t cp) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 15];
}

bool cont(unsigned char c) { return (c & 0xC0) == 0x80; }

bool bidi_control(std::uint32_t cp) { return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069); }

std::size_t blanks(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return i;
}

}  // namespace

std::size_t utf8_at(std::string_view s, std::size_t i, std::uint32_t& cp) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const std::size_t left = s.size() - i;
  const unsigned char c = b(0);
  if (c < 0x80) return cp = c, 1;
  if (c >= 0xC2 && c <= 0xDF && left >= 2 && cont(b(1))) return cp = ((c & 0x1Fu) << 6) | (b(1) & 0x3Fu), 2;
  if (c >= 0xE0 && c <= 0xEF && left >= 3 && cont(b(1)) && cont(b(2))) {
    if ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) > 0x9F)) return 0;  // overlong, surrogate
    return cp = ((c & 0x0Fu) << 12) | ((b(1) & 0x3Fu) << 6) | (b(2) & 0x3Fu), 3;
  }
  if (c >= 0xF0 && c <= 0xF4 && left >= 4 && cont(b(1)) && cont(b(2)) && cont(b(3))) {
    if ((c == 0xF0 && b(1) < 0x90) || (c == 0xF4 && b(1) > 0x8F)) return 0;
    return cp = ((c & 0x07u) << 18) | ((b(1) & 0x3Fu) << 12) | ((b(2) & 0x3Fu) << 6) | (b(3) & 0x3Fu), 4;
  }
  return 0;
}

void append_printable(std::string& out, std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '[' && i >= 2 && s[i - 1] == '#' && s[i - 2] == '#') {  // "##[" is a legacy workflow command
      append_hex(out, c);
      ++i;
      continue;
    }
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c == '\t') {
      out += '\t';
      ++i;
      continue;
    }
    std::uint32_t cp = 0;
    const std::size_t n = utf8_at(s, i, cp);
    if (n == 0 || cp < 0x20 || cp == 0x7F) {
      append_hex(out, c);
      ++i;
    } else if ((cp >= 0x80 && cp <= 0x9F) || bidi_control(cp)) {
      append_u(out, cp);
      i += n;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  append_printable(out, text);
  return out;
}

bool is_utf8(std::string_view text) {
  std::uint32_t cp = 0;
  for (std::size_t i = 0, n = 0; i < text.size(); i += n)
    if ((n = utf8_at(text, i, cp)) == 0) return false;
  return true;
}

bool starts_workflow_command(std::string_view line) {
  const std::size_t i = blanks(line);
  return line.size() >= i + 2 && line[i] == ':' && line[i + 1] == ':';
}

std::string printable_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  if (starts_workflow_command(text)) {
    const std::size_t i = blanks(text);
    out.append(text.substr(0, i));
    out += "\\x3A";
    text.remove_prefix(i + 1);
  }
  append_printable(out, text);
  return out;
}

std::string display_path(std::string_view path) {
  const bool relative = !path.empty() && path.front() != '/' && path != "-" && path != "<stdin>";
  if (relative && (starts_workflow_command(path) || path.front() == ' ' || path.front() == '\t'))
    return "./" + printable(path);
  return printable_line(path);
}

void LogGuard::feed(std::string_view in, std::string& out) {
  for (char ch : in) {
    const auto c = static_cast<unsigned char>(ch);
    if (cr_) {
      cr_ = false;
      if (c == '\n') {
        out += "\r\n";
        line_start_ = true, hashes_ = 0;
        continue;
      }
      out += "\\x0D";
      line_start_ = false;
    }
    if (c2_) {
      c2_ = false;
      if (c >= 0x80 && c <= 0x9F) {
        append_u(out, c);
        continue;
      }
      out += '\xC2';
    }
    if (colon_) {
      colon_ = false;
      line_start_ = false;
      if (c == ':') {
        out += "\\x3A:";
        hashes_ = 0;
        continue;
      }
      out += ':';
    }
    if (c == '\n') {
      out += '\n';
      line_start_ = true, hashes_ = 0;
      continue;
    }
    if (c == '\r') {
      cr_ = true;
      continue;
    }
    if (line_start_ && (c == ' ' || c == '\t')) {
      out += ch;
      continue;
    }
    if (line_start_ && c == ':') {
      colon_ = true;
      continue;
    }
    line_start_ = false;
    if (c == '[' && hashes_ >= 2) {
      out += "\\x5B";
      hashes_ = 0;
      continue;
    }
    hashes_ = c == '#' ? hashes_ + 1 : 0;
    if (c == 0xC2) {
      c2_ = true;
      continue;
    }
    if ((c < 0x20 && c != '\t') || c == 0x7F)
      append_hex(out, c);
    else
      out += ch;
  }
}

void LogGuard::finish(std::string& out) {
  if (cr_) out += "\\x0D";
  if (c2_) out += '\xC2';
  if (colon_) out += ':';
  cr_ = c2_ = colon_ = false;
}

std::string guarded(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  LogGuard g;
  g.feed(text, out);
  g.finish(out);
  return out;
}

}  // namespace ppsched
