#include "parse/cell_diagnostics.hpp"

#include <array>

#include "diag/suggest.hpp"

namespace ppsched {

namespace {
constexpr std::array<std::string_view, 12> kKindNames = {
    "F", "B", "I", "W", "SEND_F", "RECV_F", "SEND_B", "RECV_B", "UNSHARD", "RESHARD", "REDUCE_GRAD", "OVERLAP_F_B"};

constexpr std::string_view kGrammar =
    "an action is <stage><KIND>[<microbatch>], e.g. '2F0', '1SEND_B3', '0UNSHARD', or "
    "'(0F7;7B3)OVERLAP_F_B'; an empty cell is an idle step";
}  // namespace

Diagnostic cell_diagnostic(const CellParse& parsed, bool lenient, SourceLoc loc, Snippet snippet) {
  const CellIssue& issue = *parsed.issue;
  Diagnostic d;
  d.rule = std::string(issue.rule);
  d.loc = std::move(loc);
  d.snippet = std::move(snippet);
  d.message = issue.message;
  if (issue.level == CellIssue::Level::Error) {
    d.severity = Severity::Error;
    if (!issue.unknown_kind.empty()) {
      // One- and two-letter tokens are close to every short kind: list the kinds instead.
      auto near = issue.unknown_kind.size() >= 3 ? closest_match(issue.unknown_kind, kKindNames) : std::nullopt;
      if (near)
        d.message += "; did you mean '" + *near + "'?";
      else
        d.notes.push_back({{},
                           "action kinds are F, B, I, W, SEND_F, RECV_F, SEND_B, RECV_B, "
                           "UNSHARD, RESHARD, REDUCE_GRAD and OVERLAP_F_B",
                           {}});
    }
    d.notes.push_back({{}, std::string(kGrammar), {}});
    return d;
  }
  std::string reading = parsed.pytorch_reading.empty() ? "an idle step" : "'" + parsed.pytorch_reading + "'";
  if (lenient) {
    d.severity = Severity::Warning;
    d.message += "; read as " + reading + ", as PyTorch does";
  } else {
    d.severity = Severity::Error;
    // PyTorch's reading is worth copying only when it is itself a canonical action.
    SubActionTable scratch;
    bool reading_is_canonical =
        parsed.pytorch_reading.empty() || parse_action(parsed.pytorch_reading, scratch).has_value();
    if (reading_is_canonical)
      d.notes.push_back(
          {{}, "PyTorch reads this cell as " + reading + "; write it that way, or pass --lenient to accept it", {}});
    else
      d.notes.push_back({{},
                         "PyTorch reads this cell as " + reading +
                             ", which is not a valid action either; pass --lenient to "
                             "accept it as PyTorch does",
                         {}});
  }
  return d;
}

}  // namespace ppsched
