// Finds where a value sits in JSON text, given its path ("$.programs[1][3]").
//
// nlohmann-json's DOM keeps no positions, so a schema error found after parsing would name
// only a path. This scanner walks the (already valid) text to the value the path names, so
// the error can say file:line:col too. It is linear in the text and runs only on errors.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ppsched {

/// Byte offset of the value at `path` ("$", then ".key" or "[index]" steps) in valid JSON
/// `text`, or nullopt when the path does not lead to a value.
std::optional<std::size_t> locate_json_path(std::string_view text, std::string_view path);

/// A key given twice in one object: the byte offsets of the two opening quotes, and the key as
/// written (escapes left as they are).
struct DuplicateKey {
  std::size_t first = 0, second = 0;
  std::string key;
};

/// The first key (in text order of its second occurrence) that one object of valid JSON `text`
/// gives twice, or nullopt. Linear in the text, with no recursion.
std::optional<DuplicateKey> find_duplicate_key(std::string_view text);

}  // namespace ppsched
