#include "ir/action_text.hpp"

#include "ir/canonical_action.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <vector>

namespace ppsched {

namespace {

// Formatted in a local buffer and appended once: a writer of millions of actions (the CSV writer,
// the step grid) spent more on three appends per action than on the digits.
void append_plain(std::string& out, const Action& a) {
  char buf[kMaxPlainActionText];
  out.append(buf, write_plain_text(buf, a));
}

// Each kind's name padded with spaces to 16 bytes: write_plain_text copies all 16 (one move, where
// a copy of the name's own length was a call to memcpy and a fifth of the CSV writer's time), and
// the microbatch's digits overwrite the padding.
struct PaddedName {
  std::array<char, 16> text{};
  std::uint8_t size = 0;
};
const std::array<PaddedName, kActionKindCount> kPaddedNames = [] {
  std::array<PaddedName, kActionKindCount> names{};
  for (std::size_t k = 0; k < kActionKindCount; ++k) {
    names[k].text.fill(' ');
    const std::string_view name = kind_name(static_cast<ActionKind>(k));
    std::copy(name.begin(), name.end(), names[k].text.begin());
    names[k].size = static_cast<std::uint8_t>(name.size());
  }
  return names;
}();
static_assert(5 + 16 <= kMaxPlainActionText);  // a stage's digits and a padded name
}  // namespace

char* write_plain_text(char* p, const Action& a) {
  char* const end = p + kMaxPlainActionText;  // 5 digits, the longest kind name (11), 10 digits
  if (a.has_stage()) {
    p = std::to_chars(p, p + 5, a.stage).ptr;
  } else {
    *p++ = '-';  // PyTorch's placeholder stage for containers
    *p++ = '1';
  }
  const auto kind = static_cast<std::size_t>(a.kind);
  const PaddedName& name = kPaddedNames[kind < kActionKindCount ? kind : 0];  // kind_name's "" beyond
  std::memcpy(p, name.text.data(), name.text.size());
  p += name.size;
  if (a.has_microbatch()) p = std::to_chars(p, end, a.microbatch()).ptr;
  return p;
}

std::size_t plain_text_size(const Action& a) {
  auto digits = [](std::uint64_t v) {
    std::size_t n = 1;
    for (; v >= 10; v /= 10) ++n;
    return n;
  };
  return (a.has_stage() ? digits(a.stage) : 2) + kind_name(a.kind).size() +
         (a.has_microbatch() ? digits(a.microbatch()) : 0);
}

void append_action_text(std::string& out, const Action& a, const SubActionTable& subs) {
  if (a.is_idle()) return;
  if (!a.is_container()) {
    append_plain(out, a);
    return;
  }
  auto group = subs.group(a.group());
  if (group.empty()) {  // PyTorch keeps sub_actions=None and prints the placeholder stage
    out += "-1";
    out += kind_name(a.kind);
    return;
  }
  out += '(';
  for (std::size_t i = 0; i < group.size(); ++i) {
    if (i) out += ';';
    append_plain(out, group[i]);
  }
  out += ')';
  out += kind_name(a.kind);
}

std::string action_text(const Action& a, const SubActionTable& subs) {
  std::string s;
  append_action_text(s, a, subs);
  return s;
}

namespace {

// Python's str.strip() set, restricted to single bytes.
constexpr bool is_space(char c) {
  auto u = static_cast<unsigned char>(c);
  return u == ' ' || (u >= 9 && u <= 13) || (u >= 0x1c && u <= 0x1f);
}
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_word(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }

std::string quoted(std::string_view s) {
  std::string q;
  q.reserve(s.size() + 2);
  q += '\'';
  q.append(s);
  q += '\'';
  return q;
}

// Collects the first problem of a cell; an Error always wins over a PytorchAccepts issue.
struct IssueSlot {
  std::optional<CellIssue> issue;
  bool has_error() const { return issue && issue->level == CellIssue::Level::Error; }
  void error(std::size_t off, std::size_t len, std::string_view rule, std::string msg, std::string unknown_kind = {}) {
    if (has_error()) return;
    issue = CellIssue{
        CellIssue::Level::Error, static_cast<std::uint32_t>(off), static_cast<std::uint32_t>(len ? len : 1), rule,
        std::move(msg),          std::move(unknown_kind)};
  }
  void accepts(std::size_t off, std::size_t len, std::string msg) {
    if (issue) return;
    issue = CellIssue{CellIssue::Level::PytorchAccepts,
                      static_cast<std::uint32_t>(off),
                      static_cast<std::uint32_t>(len ? len : 1),
                      "action-noncanonical",
                      std::move(msg),
                      {}};
  }
};

// Reads a run of ASCII digits as a number; sets `too_big` when it exceeds `limit`.
std::uint64_t read_number(std::string_view digits, std::uint64_t limit, bool& too_big) {
  too_big = digits.size() > 19;
  std::uint64_t v = 0;
  if (too_big) return v;
  for (char c : digits) v = v * 10 + static_cast<unsigned>(c - '0');
  too_big = v > limit;
  return v;
}

// One plain action `<stage><KIND><microbatch>` at text (already stripped). `base` is the
// offset of text within the cell, for issue positions.
Action parse_plain(std::string_view text, std::size_t base, IssueSlot& slot) {
  std::size_t p = 0;
  while (p < text.size() && is_digit(text[p])) ++p;
  if (p == 0) {
    auto [k, klen] = canonical::match_kind(text);
    if (!text.empty() && text[0] == '(')
      slot.error(base, 1, "action-syntax", "unclosed '(' in " + quoted(text));
    else if (klen)
      slot.error(base, klen, "action-syntax", "missing stage index before " + quoted(text));
    else if (text.size() > 1 && text[0] == '-' && is_digit(text[1]))
      slot.error(base, 1, "action-syntax", "negative stage index in " + quoted(text));
    else
      slot.error(base, text.size(), "action-syntax", quoted(text) + " is not an action");
    return {};
  }
  bool too_big = false;
  std::string_view stage_digits = text.substr(0, p);
  auto stage = read_number(stage_digits, Action::kMaxStage, too_big);
  if (too_big) {
    slot.error(base, p, "action-limit",
               "stage index " + std::string(stage_digits) + " is beyond ppsched's limit of " +
                   std::to_string(Action::kMaxStage));
    return {};
  }
  if (p > 1 && text[0] == '0') slot.accepts(base, p, "leading zero in stage index " + quoted(stage_digits));

  auto [kind, klen] = canonical::match_kind(text.substr(p));
  if (klen == 0) {
    std::size_t w = p;
    while (w < text.size() && is_word(text[w])) ++w;
    std::string token(text.substr(p, w - p));
    if (token.empty()) {
      slot.error(base + p, 1, "action-syntax",
                 "missing action kind after stage index " + quoted(stage_digits) + " in " + quoted(text));
      return {};
    }
    std::string upper = token;
    for (char& c : upper)
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (kind_from_name(upper) && upper != "OVERLAP_F_B") {
      std::string fixed(text);
      fixed.replace(p, token.size(), upper);
      slot.error(base + p, token.size(), "action-syntax",
                 "action kinds are upper case: did you mean " + quoted(fixed) + "?");
    } else if (token == "OVERLAP_F_B") {
      slot.error(base + p, token.size(), "action-syntax",
                 "OVERLAP_F_B takes sub-actions, not a stage: write it as '(0F7;7B3)OVERLAP_F_B'");
    } else {
      slot.error(base + p, token.size(), "action-syntax",
                 "unknown action kind " + quoted(token) + " in " + quoted(text), token);
    }
    return {};
  }
  std::size_t q = p + klen, r = q;
  while (r < text.size() && is_digit(text[r])) ++r;
  std::uint32_t mb = Action::kNoMicrobatch;
  if (r > q) {
    std::string_view mb_digits = text.substr(q, r - q);
    auto v = read_number(mb_digits, Action::kMaxMicrobatch, too_big);
    if (too_big) {
      slot.error(base + q, r - q, "action-limit",
                 "microbatch index " + std::string(mb_digits) + " is beyond ppsched's limit of " +
                     std::to_string(Action::kMaxMicrobatch));
      return {};
    }
    if (r - q > 1 && text[q] == '0')
      slot.accepts(base + q, r - q, "leading zero in microbatch index " + quoted(mb_digits));
    mb = static_cast<std::uint32_t>(v);
  }
  if (r < text.size()) {
    std::string_view rest = text.substr(r);
    bool old_bw_spelling = kind == ActionKind::B && r == q && !rest.empty() && rest[0] == 'W' &&
                           std::all_of(rest.begin() + 1, rest.end(), is_digit);
    if (old_bw_spelling)
      slot.accepts(base + q, rest.size(),
                   quoted(text) + " is the old spelling of a full backward; write " +
                       quoted(std::string(text.substr(0, q)) + std::string(rest.substr(1))));
    else if (is_space(rest[0]))
      slot.accepts(base + r, rest.size(), "whitespace inside action " + quoted(text));
    else
      slot.accepts(base + r, rest.size(), "unexpected " + quoted(rest) + " after action " + quoted(text.substr(0, r)));
  }
  if (takes_microbatch(kind) && r == q)
    slot.accepts(base + p, klen,
                 quoted(text.substr(0, r)) + " has no microbatch index; " + std::string(kind_name(kind)) +
                     " needs one, e.g. " + quoted(std::string(text.substr(0, q)) + "0"));
  if (!takes_microbatch(kind) && r > q)
    slot.accepts(base + q, r - q,
                 std::string(kind_name(kind)) + " takes no microbatch index: " + quoted(text.substr(0, r)));
  return Action::make(kind, static_cast<std::uint16_t>(stage), mb);
}

std::pair<std::size_t, std::size_t> strip_range(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return {b, e};
}

}  // namespace

const char* parse_canonical_prefix(const char* p, const char* end, Action& out) {
  return canonical::parse_prefix(p, end, out);
}

bool parse_canonical_plain(std::string_view cell, Action& out) {
  if (cell.empty()) {
    out = Action::idle();
    return true;
  }
  const char* end = cell.data() + cell.size();
  Action a;
  if (parse_canonical_prefix(cell.data(), end, a) != end) return false;
  out = a;
  return true;
}

CellParse parse_action_cell(std::string_view cell, bool lenient, SubActionTable& subs) {
  CellParse out;
  if (parse_canonical_plain(cell, out.action)) {
    out.accepted = true;
    return out;
  }
  IssueSlot slot;
  auto [b, e] = strip_range(cell);
  std::string_view text = cell.substr(b, e - b);
  if (b > 0 || e < cell.size()) {
    if (text.empty())
      slot.accepts(0, cell.size(), "whitespace-only cell (an idle step is an empty cell)");
    else
      slot.accepts(b > 0 ? 0 : e, b > 0 ? b : cell.size() - e, "whitespace around action " + quoted(text));
  }

  // Sub-actions of a container are collected here before they are known to be accepted.
  thread_local std::vector<Action> scratch;
  bool container = false;
  ActionKind container_kind = ActionKind::OverlapFB;
  Action plain;

  if (text.empty()) {
    plain = Action::idle();
  } else if (text[0] == '(' && text.find(')') != std::string_view::npos) {
    container = true;
    scratch.clear();
    std::size_t close = text.find(')');
    std::string_view inner = text.substr(1, close - 1);
    std::size_t inner_base = b + 1;
    auto [ib, ie] = strip_range(inner);
    if (ib < ie) {
      std::size_t start = 0;
      while (start <= inner.size()) {
        std::size_t semi = inner.find(';', start);
        if (semi == std::string_view::npos) semi = inner.size();
        std::string_view part = inner.substr(start, semi - start);
        auto [pb, pe] = strip_range(part);
        std::string_view stripped = part.substr(pb, pe - pb);
        std::size_t at = inner_base + start;
        if (stripped.empty()) {
          slot.accepts(at, part.empty() ? 1 : part.size(), "empty sub-action in " + quoted(text));
        } else {
          if (pb > 0 || pe < part.size())
            slot.accepts(at, part.size(), "whitespace around sub-action " + quoted(stripped));
          if (stripped[0] == '(') {
            slot.error(
                at + pb, 1, "action-syntax",
                "nested '(' in " + quoted(text) + ": a container holds plain actions, e.g. '(0F7;7B3)OVERLAP_F_B'");
          } else {
            Action sub = parse_plain(stripped, at + pb, slot);
            if (!slot.has_error()) scratch.push_back(sub);
          }
        }
        start = semi + 1;
      }
    }
    std::string_view type = text.substr(close + 1);
    auto kind = kind_from_name(type);
    if (!kind) {
      if (type.empty())
        slot.error(b + close, 1, "action-syntax", "missing computation type after ')' in " + quoted(text));
      else
        slot.error(b + close + 1, type.size(), "action-syntax",
                   "unknown computation type " + quoted(type) + " after ')'", std::string(type));
    } else {
      container_kind = *kind;
      if (!slot.has_error() && scratch.empty())
        slot.accepts(b, text.size(), "container " + quoted(text) + " has no sub-actions");
      if (*kind != ActionKind::OverlapFB)
        slot.accepts(b + close + 1, type.size(), "only OVERLAP_F_B holds sub-actions, not " + quoted(type));
    }
  } else {
    plain = parse_plain(text, b, slot);
  }

  out.issue = std::move(slot.issue);
  bool has_error = out.issue && out.issue->level == CellIssue::Level::Error;
  bool noncanonical = out.issue && out.issue->level == CellIssue::Level::PytorchAccepts;
  out.accepted = !has_error && (lenient || !noncanonical);

  if (container && !has_error) {
    // Render PyTorch's reading before deciding, so a strict rejection can still show it.
    SubActionTable& table = subs;
    if (out.accepted) {
      out.action = Action::container(container_kind, table.add(scratch));
      if (noncanonical) out.pytorch_reading = action_text(out.action, table);
    } else {
      SubActionTable tmp;
      out.pytorch_reading = action_text(Action::container(container_kind, tmp.add(scratch)), tmp);
    }
  } else if (!container) {
    out.action = plain;
    if (noncanonical) out.pytorch_reading = action_text(plain, subs);
  }
  return out;
}

std::optional<Action> parse_action(std::string_view text, SubActionTable& subs) {
  CellParse p = parse_action_cell(text, /*lenient=*/false, subs);
  if (!p.accepted || p.issue) return std::nullopt;
  return p.action;
}

}  // namespace ppsched
