#include "ir/action.hpp"

#include <array>

namespace ppsched {

namespace {
// Indexed by ActionKind; the spelling is PyTorch's `_ComputationType` value.
constexpr std::array<std::string_view, kActionKindCount> kNames = {
    "", "F", "B", "I", "W", "SEND_F", "RECV_F", "SEND_B", "RECV_B", "UNSHARD", "RESHARD", "REDUCE_GRAD", "OVERLAP_F_B",
};
}  // namespace

std::string_view kind_name(ActionKind kind) {
  auto i = static_cast<std::size_t>(kind);
  return i < kNames.size() ? kNames[i] : std::string_view{};
}

std::optional<ActionKind> kind_from_name(std::string_view name) {
  if (name.empty()) return std::nullopt;
  for (std::size_t i = 1; i < kNames.size(); ++i)
    if (kNames[i] == name) return static_cast<ActionKind>(i);
  return std::nullopt;
}

}  // namespace ppsched
