#include "parse/json_locate.hpp"

#include <charconv>
#include <string>
#include <unordered_map>
#include <vector>

namespace ppsched {

namespace {

std::size_t skip_ws(std::string_view t, std::size_t i) {
  while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) ++i;
  return i;
}

// Index just past the string that starts at t[i] == '"'.
std::size_t skip_string(std::string_view t, std::size_t i) {
  for (++i; i < t.size(); ++i) {
    if (t[i] == '\\')
      ++i;
    else if (t[i] == '"')
      return i + 1;
  }
  return t.size();
}

// Index just past the value that starts at t[i]. Containers are skipped by counting brackets,
// not by recursion, so a deeply nested document cannot exhaust the stack.
std::size_t skip_value(std::string_view t, std::size_t i) {
  if (i >= t.size()) return i;
  if (t[i] == '"') return skip_string(t, i);
  if (t[i] == '{' || t[i] == '[') {
    std::size_t depth = 0;
    while (i < t.size()) {
      char c = t[i];
      if (c == '"') {
        i = skip_string(t, i);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if ((c == '}' || c == ']') && --depth == 0) return i + 1;
      ++i;
    }
    return i;
  }
  while (i < t.size() && t[i] != ',' && t[i] != ']' && t[i] != '}' && t[i] != ' ' && t[i] != '\n' && t[i] != '\r' &&
         t[i] != '\t')
    ++i;
  return i;
}

}  // namespace

std::optional<std::size_t> locate_json_path(std::string_view text, std::string_view path) {
  if (!path.starts_with("$")) return std::nullopt;
  path.remove_prefix(1);
  std::size_t i = 0;
  if (text.starts_with("\xEF\xBB\xBF")) i = 3;
  i = skip_ws(text, i);
  while (!path.empty()) {
    if (path[0] == '.') {
      std::size_t end = path.find_first_of(".[", 1);
      std::string_view key = path.substr(1, end == std::string_view::npos ? path.size() - 1 : end - 1);
      path.remove_prefix(1 + key.size());
      if (i >= text.size() || text[i] != '{') return std::nullopt;
      i = skip_ws(text, i + 1);
      for (;;) {
        if (i >= text.size() || text[i] != '"') return std::nullopt;
        std::size_t key_end = skip_string(text, i);
        bool match = text.substr(i + 1, key_end - i - 2) == key;
        i = skip_ws(text, key_end);
        if (i >= text.size() || text[i] != ':') return std::nullopt;
        i = skip_ws(text, i + 1);
        if (match) break;
        i = skip_ws(text, skip_value(text, i));
        if (i >= text.size() || text[i] != ',') return std::nullopt;
        i = skip_ws(text, i + 1);
      }
    } else if (path[0] == '[') {
      std::size_t close = path.find(']');
      if (close == std::string_view::npos) return std::nullopt;
      std::size_t index = 0;
      auto [p, ec] = std::from_chars(path.data() + 1, path.data() + close, index);
      if (ec != std::errc() || p != path.data() + close) return std::nullopt;
      path.remove_prefix(close + 1);
      if (i >= text.size() || text[i] != '[') return std::nullopt;
      i = skip_ws(text, i + 1);
      for (std::size_t k = 0; k < index; ++k) {
        if (i >= text.size() || text[i] == ']') return std::nullopt;
        i = skip_ws(text, skip_value(text, i));
        if (i >= text.size() || text[i] != ',') return std::nullopt;
        i = skip_ws(text, i + 1);
      }
      if (i >= text.size() || text[i] == ']') return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  return i;
}

std::optional<DuplicateKey> find_duplicate_key(std::string_view text) {
  // One frame per open container; an object's frame holds its keys and where each starts.
  struct Frame {
    bool object = false;
    bool expect_key = false;
    std::unordered_map<std::string_view, std::size_t> keys;
  };
  std::vector<Frame> open;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"') {
      std::size_t end = skip_string(text, i);
      if (!open.empty() && open.back().object && open.back().expect_key) {
        Frame& f = open.back();
        std::string_view key = text.substr(i + 1, end >= i + 2 ? end - i - 2 : 0);
        auto [it, inserted] = f.keys.emplace(key, i);
        if (!inserted) return DuplicateKey{it->second, i, std::string(key)};
        f.expect_key = false;
      }
      i = end;
      continue;
    }
    if (c == '{' || c == '[') {
      Frame& f = open.emplace_back();
      f.object = c == '{';
      f.expect_key = f.object;
    } else if (c == '}' || c == ']') {
      if (!open.empty()) open.pop_back();
    } else if (c == ',' && !open.empty() && open.back().object) {
      open.back().expect_key = true;
    }
    ++i;
  }
  return std::nullopt;
}

}  // namespace ppsched
