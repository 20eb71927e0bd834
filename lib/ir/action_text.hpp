// The text form of one action, exactly PyTorch's grammar: `<stage><KIND>[<microbatch>]`
// (`0F0`, `3SEND_B2`, `0UNSHARD`), a container `(<sub>;<sub>)<KIND>`
// (`(0F7;7B3)OVERLAP_F_B`), and the empty cell for an idle step.
//
// Printing gives PyTorch's `str(action)` byte for byte. Parsing is strict about what is
// canonical and says precisely what is wrong; in lenient mode it accepts exactly what
// PyTorch's prefix-matching `_Action.from_str` accepts (`0F0x` as `0F0`, `00F01` as `0F1`,
// `0BW0` as `0B`, surrounding whitespace), reporting each such cell so callers can warn.
//
// Deliberate limits: digits are ASCII only (Python's `\d` also takes other Unicode digits),
// whitespace is ASCII (plus \x1c-\x1f, which Python strips too), and numbers beyond the
// Action field limits (action.hpp) are errors in both modes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ir/action.hpp"
#include "ir/schedule.hpp"

namespace ppsched {

/// Appends PyTorch's text for `a` (empty for an idle step).
void append_action_text(std::string& out, const Action& a, const SubActionTable& subs);
/// The most bytes write_plain_text writes: a 5-digit stage, the longest kind name, 10 digits.
inline constexpr std::size_t kMaxPlainActionText = 32;
/// Writes plain (not container, not idle) action `a` at `p`, which has room for
/// kMaxPlainActionText bytes, and returns one past its end: the hot loop of the writers, which
/// keep a raw buffer rather than append to a string a cell at a time. It may write spaces past
/// the end it returns (within the room), which a writer overwrites or keeps as blanks.
char* write_plain_text(char* p, const Action& a);
/// How many bytes write_plain_text writes for `a`, counted without writing them (a step grid's
/// widths pass reads every cell of a dry run's timeline).
std::size_t plain_text_size(const Action& a);
std::string action_text(const Action& a, const SubActionTable& subs);

/// What is wrong with a cell: the first problem found.
struct CellIssue {
  enum class Level : std::uint8_t {
    Error,           ///< PyTorch rejects it too (or it is beyond ppsched's limits)
    PytorchAccepts,  ///< not canonical, but PyTorch reads it: an error when strict, a warning when lenient
  };
  Level level = Level::Error;
  std::uint32_t offset = 0;  ///< byte offset of the problem within the cell
  std::uint32_t length = 1;  ///< bytes it spans (at least 1, for the caret)
  std::string_view rule;     ///< "action-syntax", "action-noncanonical" or "action-limit"
  std::string message;
  std::string unknown_kind;  ///< for an unknown action kind, the token, so callers can suggest one
};

/// The outcome of parsing one cell.
struct CellParse {
  Action action;                   ///< the action read (meaningful when accepted)
  bool accepted = false;           ///< true when the cell yields an action under the chosen mode
  std::optional<CellIssue> issue;  ///< first problem found, if any
  std::string pytorch_reading;     ///< for a PytorchAccepts issue: PyTorch's reading, in canonical text
};

/// The fast path: true when `cell` is exactly a canonical plain action (or empty: an idle step),
/// stored in `out`. Anything else (containers, non-canonical text, errors) returns false and
/// goes through parse_action_cell for the full answer.
bool parse_canonical_plain(std::string_view cell, Action& out);

/// The same fast path on text that goes on after the cell: reads a canonical plain action at the
/// start of [p, end) and returns where it stops, or nullptr when no canonical action starts there.
/// The cell is canonical exactly when the text stops there too (at the cell's end), so a reader
/// can parse and split in one pass: parse_canonical_plain(cell) accepts `cell` with action `a`
/// if and only if this returns cell's end and sets `a` (for a non-empty cell).
const char* parse_canonical_prefix(const char* p, const char* end, Action& out);

/// Parses one cell (already unquoted). On acceptance, a container's sub-actions are added to
/// `subs`; nothing is added otherwise. No heap allocation on the canonical path.
CellParse parse_action_cell(std::string_view cell, bool lenient, SubActionTable& subs);

/// Parses a canonical cell; nullopt for anything that is not canonical.
std::optional<Action> parse_action(std::string_view text, SubActionTable& subs);

}  // namespace ppsched
