// "Did you mean ...?": the closest known name to a misspelt one (ninja's habit).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ppsched {

/// Edit distance (insert, delete, substitute; case-insensitive) between a and b.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate nearest to `word` if it is within max(1, word.size()/3) edits.
std::optional<std::string> closest_match(std::string_view word, std::span<const std::string_view> candidates);

}  // namespace ppsched
