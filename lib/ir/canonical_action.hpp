// The canonical fast path of reading an action, inline: PyTorch's text for a plain action, with no
// leading zero, space or anything else PyTorch would also accept. action_text.cpp's
// parse_canonical_prefix is this; the CSV reader includes it so that its per-cell loop, run once
// per action of a 6M-action file, inlines it rather than calls it (issue 48).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "ir/action.hpp"

namespace ppsched::canonical {

constexpr bool digit(char c) { return c >= '0' && c <= '9'; }

// PyTorch's alternation F|I|B|W|UNSHARD|RESHARD|REDUCE_GRAD|SEND_F|RECV_F|SEND_B|RECV_B at the
// start of s. No alternative is a prefix of another, so the first hit is the only one.
[[gnu::always_inline]] inline std::pair<ActionKind, std::size_t> match_kind(std::string_view s) {
  if (s.empty()) return {ActionKind::Idle, 0};
  // By first letter, then the rest compared whole: SEND_* and RECV_* are two cells in three of a
  // lowered schedule, so they are not left to a loop over every name.
  auto is = [&](std::string_view name, ActionKind kind) -> std::pair<ActionKind, std::size_t> {
    if (s.starts_with(name)) return {kind, name.size()};
    return {ActionKind::Idle, 0};
  };
  auto direction = [&](ActionKind forward, ActionKind backward) -> std::pair<ActionKind, std::size_t> {
    if (s.size() < 6 || s[4] != '_') return {ActionKind::Idle, 0};
    if (s[5] == 'F') return {forward, 6};
    if (s[5] == 'B') return {backward, 6};
    return {ActionKind::Idle, 0};
  };
  switch (s[0]) {
    case 'F':
      return {ActionKind::F, 1};
    case 'I':
      return {ActionKind::I, 1};
    case 'B':
      return {ActionKind::B, 1};
    case 'W':
      return {ActionKind::W, 1};
    case 'U':
      return is("UNSHARD", ActionKind::Unshard);
    case 'S':
      return s.starts_with("SEND") ? direction(ActionKind::SendF, ActionKind::SendB)
                                   : std::pair{ActionKind::Idle, std::size_t{0}};
    case 'R':
      if (s.starts_with("RECV")) return direction(ActionKind::RecvF, ActionKind::RecvB);
      if (s.size() > 2 && s[2] == 'S') return is("RESHARD", ActionKind::Reshard);
      return is("REDUCE_GRAD", ActionKind::ReduceGrad);
    default:
      return {ActionKind::Idle, 0};
  }
}

// The digits at p, at most `most` of them plus one (so that one too many is seen), as a number;
// `stop` is where they end. Bounded up front, so the loop tests one pointer and one digit.
[[gnu::always_inline]] inline std::uint64_t read_digits(const char* p, const char* end, std::ptrdiff_t most,
                                                        const char*& stop) {
  const char* limit = end - p > most ? p + most + 1 : end;
  std::uint64_t value = 0;
  for (; p < limit; ++p) {
    const auto digit = static_cast<unsigned>(static_cast<unsigned char>(*p)) - unsigned{'0'};
    if (digit > 9) break;
    value = value * 10 + digit;
  }
  stop = p;
  return value;
}

[[gnu::always_inline]] inline const char* parse_prefix(const char* p, const char* end, Action& out) {
  // Stage: digits without a leading zero, at most 5 of them (65534 at most).
  if (p == end || !digit(*p) || (*p == '0' && p + 1 < end && digit(p[1]))) return nullptr;
  const char* digits_end = p;
  const std::uint64_t stage = read_digits(p, end, 5, digits_end);
  if (digits_end - p > 5 || stage > Action::kMaxStage) return nullptr;
  p = digits_end;
  auto [kind, klen] = match_kind(std::string_view(p, static_cast<std::size_t>(end - p)));
  if (klen == 0) return nullptr;
  p += klen;
  if (!takes_microbatch(kind)) {
    out = Action::make(kind, static_cast<std::uint16_t>(stage));
    return p;
  }
  // Microbatch: 1 to 10 digits, no leading zero, at most kMaxMicrobatch.
  if (p == end || !digit(*p) || (*p == '0' && p + 1 < end && digit(p[1]))) return nullptr;
  const char* first = p;
  const std::uint64_t mb = read_digits(first, end, 10, p);
  if (p - first > 10 || mb > Action::kMaxMicrobatch) return nullptr;
  out = Action::make(kind, static_cast<std::uint16_t>(stage), static_cast<std::uint32_t>(mb));
  return p;
}

}  // namespace ppsched::canonical
