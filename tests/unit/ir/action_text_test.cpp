#include "ir/action_text.hpp"

#include <random>
#include <regex>
#include <string>
#include <vector>

#include "support/catch.hpp"

using namespace ppsched;

namespace {
// Parses one cell and prints it back (empty string on rejection).
std::string reprint(std::string_view cell, bool lenient = false) {
  SubActionTable subs;
  CellParse p = parse_action_cell(cell, lenient, subs);
  return p.accepted ? action_text(p.action, subs) : std::string("<rejected>");
}
}  // namespace

TEST_CASE("canonical cells print back unchanged") {
  for (const char* cell :
       {"0F0", "12B3", "1I0", "4W99", "3SEND_F2", "2RECV_F2", "1SEND_B0", "0RECV_B7", "0UNSHARD", "5RESHARD",
        "65534REDUCE_GRAD", "(0F7;7B3)OVERLAP_F_B", "(1F0)OVERLAP_F_B", "0F4294967294", ""}) {
    INFO(cell);
    SubActionTable subs;
    CellParse p = parse_action_cell(cell, false, subs);
    CHECK(p.accepted);
    CHECK_FALSE(p.issue);
    CHECK(action_text(p.action, subs) == cell);
  }
}

TEST_CASE("lenient mode reads cells the way PyTorch's prefix match does") {
  CHECK(reprint("0F0x", true) == "0F0");
  CHECK(reprint("00F01", true) == "0F1");
  CHECK(reprint("0BW0", true) == "0B");
  CHECK(reprint("1F", true) == "1F");
  CHECK(reprint(" 0F0 ", true) == "0F0");
  CHECK(reprint("\t", true).empty());
  CHECK(reprint("0UNSHARD5", true) == "0UNSHARD5");
  CHECK(reprint("0F 0", true) == "0F");
  CHECK(reprint("()OVERLAP_F_B", true) == "-1OVERLAP_F_B");
  CHECK(reprint("(0F1)F", true) == "(0F1)F");
  CHECK(reprint("( 0F0 ;;1B0)OVERLAP_F_B", true) == "(0F0;1B0)OVERLAP_F_B");
}

TEST_CASE("strict mode rejects every non-canonical cell, and says how PyTorch reads it") {
  for (auto [cell, reading] :
       std::initializer_list<std::pair<const char*, const char*>>{{"0F0x", "0F0"},
                                                                  {"00F01", "0F1"},
                                                                  {"0BW0", "0B"},
                                                                  {"1F", "1F"},
                                                                  {" 0F0", "0F0"},
                                                                  {"0UNSHARD5", "0UNSHARD5"},
                                                                  {"()OVERLAP_F_B", "-1OVERLAP_F_B"},
                                                                  {"(0F1)F", "(0F1)F"}}) {
    INFO(cell);
    SubActionTable subs;
    CellParse p = parse_action_cell(cell, false, subs);
    CHECK_FALSE(p.accepted);
    REQUIRE(p.issue);
    CHECK(p.issue->level == CellIssue::Level::PytorchAccepts);
    CHECK(p.pytorch_reading == reading);
    CHECK(subs.group_count() == 0);  // nothing is stored for a rejected container
  }
}

TEST_CASE("cells PyTorch rejects are errors in both modes") {
  for (const char* cell : {"F0", "0f0", "0X1", "-1F0", "0", "(0F0;1B0)FOO", "(0F0;1B0)", "(0F0;(1F0)OVERLAP_F_B",
                           "(0F0", "0OVERLAP_F_B", "x"}) {
    INFO(cell);
    SubActionTable subs;
    for (bool lenient : {false, true}) {
      CellParse p = parse_action_cell(cell, lenient, subs);
      CHECK_FALSE(p.accepted);
      REQUIRE(p.issue);
      CHECK(p.issue->level == CellIssue::Level::Error);
    }
  }
}

TEST_CASE("numbers beyond the IR limits are errors with the limit named") {
  SubActionTable subs;
  CellParse big_stage = parse_action_cell("65535F0", true, subs);
  REQUIRE(big_stage.issue);
  CHECK(big_stage.issue->rule == "action-limit");
  CHECK(big_stage.issue->message == "stage index 65535 is beyond ppsched's limit of 65534");
  CellParse huge = parse_action_cell("18446744073709551617F0", true, subs);
  REQUIRE(huge.issue);
  CHECK(huge.issue->rule == "action-limit");
  CellParse big_mb = parse_action_cell("0F99999999999", true, subs);
  REQUIRE(big_mb.issue);
  CHECK(big_mb.issue->message == "microbatch index 99999999999 is beyond ppsched's limit of 4294967294");
  CHECK(big_mb.issue->offset == 2);
}

TEST_CASE("issue offsets point at the offending part of the cell") {
  SubActionTable subs;
  auto at = [&](std::string_view cell) {
    CellParse p = parse_action_cell(cell, false, subs);
    REQUIRE(p.issue);
    return std::pair{p.issue->offset, p.issue->length};
  };
  CHECK(at("0X1") == std::pair{1u, 1u});
  CHECK(at("12SEND_Q1") == std::pair{2u, 6u});
  CHECK(at("0F0xyz") == std::pair{3u, 3u});
  CHECK(at("(0F0;1B0)FOO") == std::pair{9u, 3u});
  CHECK(at("(0F0;1q0)OVERLAP_F_B") == std::pair{6u, 1u});
}

TEST_CASE("parse_action accepts only canonical text") {
  SubActionTable subs;
  auto a = parse_action("3SEND_F2", subs);
  REQUIRE(a);
  CHECK(*a == Action::make(ActionKind::SendF, 3, 2));
  CHECK_FALSE(parse_action("03SEND_F2", subs));
  CHECK_FALSE(parse_action("3SEND_F", subs));
}

namespace {

// The canonical grammar written out independently of the parser: a stage of 1 to 5 digits
// without a leading zero (at most 65534), a kind, and for the kinds that take one a microbatch of
// 1 to 10 digits without a leading zero (at most 4294967294).
bool canonical_by_regex(const std::string& cell) {
  static const std::regex grammar(
      "(0|[1-9][0-9]{0,4})(F|I|B|W|SEND_F|RECV_F|SEND_B|RECV_B)(0|[1-9][0-9]{0,9})|(0|[1-9][0-9]{0,4})(UNSHARD|RESHARD|"
      "REDUCE_GRAD)");
  std::smatch m;
  if (!std::regex_match(cell, m, grammar)) return false;
  const std::string stage = m[1].matched ? m[1].str() : m[4].str();
  if (std::stoull(stage) > Action::kMaxStage) return false;
  return !m[3].matched || std::stoull(m[3].str()) <= Action::kMaxMicrobatch;
}

}  // namespace

TEST_CASE("the one-pass prefix parser accepts exactly the canonical cells, wherever the text goes on") {
  // Cells built from the grammar's own pieces and near misses, each followed by what a row may hold
  // next; parse_canonical_plain and parse_canonical_prefix must agree with the regex and each other.
  const std::vector<std::string> stages = {"0", "1", "7", "00", "01", "65534", "65535", "123456", ""};
  const std::vector<std::string> kinds = {"F",      "I",           "B",      "W",       "SEND_F",
                                          "RECV_B", "SEND_X",      "RECV_",  "UNSHARD", "RESHARD",
                                          "RESH",   "REDUCE_GRAD", "REDUCE", "f",       ""};
  const std::vector<std::string> microbatches = {"0",          "1",           "42", "4294967294", "4294967295",
                                                 "9999999999", "12345678901", "01", "00",         ""};
  const std::vector<std::string> noise = {" ", "_", "(", "x", "F", "0"};
  std::mt19937 rng(5);
  std::size_t canonical = 0;
  for (int trial = 0; trial < 60000; ++trial) {
    std::string cell =
        stages[rng() % stages.size()] + kinds[rng() % kinds.size()] + microbatches[rng() % microbatches.size()];
    if (rng() % 4 == 0) cell.insert(rng() % (cell.size() + 1), noise[rng() % noise.size()]);
    if (cell.empty()) continue;  // an idle step: the reader's business, not the action grammar's
    INFO("cell '" << cell << "'");
    const bool want = canonical_by_regex(cell);
    Action plain;
    REQUIRE(parse_canonical_plain(cell, plain) == want);
    for (const char* after : {"", ",", ",1F0", "x"}) {
      const std::string row = cell + after;
      Action a;
      const char* stop = parse_canonical_prefix(row.data(), row.data() + row.size(), a);
      const bool cell_is_whole = stop == row.data() + cell.size();
      if (want) {
        REQUIRE(cell_is_whole);
        CHECK(a == plain);
      } else if (std::string_view(after).empty() || after[0] == ',') {
        CHECK_FALSE(cell_is_whole);  // a reader splitting at the comma must not take it
      }
    }
    canonical += want;
  }
  CHECK(canonical > 3000);  // the generator reaches the accepting side often (3690 of 60000)
}

TEST_CASE("plain_text_size counts what write_plain_text writes") {
  char buf[kMaxPlainActionText];
  for (int k = 1; k < kActionKindCount; ++k)
    for (std::uint16_t stage :
         {std::uint16_t{0}, std::uint16_t{9}, std::uint16_t{10}, Action::kMaxStage, Action::kNoStage})
      for (std::uint32_t mb : {0u, 9u, 10u, 12345u, Action::kMaxMicrobatch, Action::kNoMicrobatch}) {
        const Action a = Action::make(static_cast<ActionKind>(k), stage, mb);
        INFO(k << " " << stage << " " << mb);
        CHECK(plain_text_size(a) == static_cast<std::size_t>(write_plain_text(buf, a) - buf));
      }
}
