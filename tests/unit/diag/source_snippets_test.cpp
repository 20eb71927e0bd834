// Snippets filled from a file's text (diag/source_snippets.cpp): the cell under the column up
// to the next comma, CRLF line ends, notes, and locations the text does not have.
#include "diag/source_snippets.hpp"

#include "support/catch.hpp"

using namespace ppsched;

namespace {

Diagnostic at(std::uint32_t line, std::uint32_t column) {
  Diagnostic d;
  d.loc = {"s.csv", line, column, {}};
  return d;
}

}  // namespace

TEST_CASE("snippets: the cell from the column to the next comma, on its line") {
  std::vector<Diagnostic> ds{at(2, 5), at(2, 14), at(1, 1)};
  ds[0].notes.push_back({{"s.csv", 1, 5, {}}, "the sender", {}});
  REQUIRE(needs_snippets(ds));
  fill_snippets(ds, "0F0,0SEND_F0\r\n1F0,1RECV_F0,1B0\r\n");
  CHECK(ds[0].snippet.text == "1F0,1RECV_F0,1B0");  // without the CR
  CHECK(ds[0].snippet.caret == 4);
  CHECK(ds[0].snippet.length == 8);
  CHECK(ds[1].snippet.length == 3);  // the last cell runs to the end of the line
  CHECK(ds[2].snippet.text == "0F0,0SEND_F0");
  CHECK(ds[2].snippet.length == 3);
  CHECK(ds[0].notes[0].snippet.text == "0F0,0SEND_F0");
  CHECK(ds[0].notes[0].snippet.caret == 4);
  CHECK_FALSE(needs_snippets(ds));
}

TEST_CASE("snippets: whole-file findings and lines beyond the text get none") {
  std::vector<Diagnostic> ds{at(0, 0), at(7, 1), at(1, 0)};
  CHECK(needs_snippets(ds));  // line 7 and line 1 point somewhere
  fill_snippets(ds, "0F0\n");
  CHECK(ds[0].snippet.text.empty());
  CHECK(ds[1].snippet.text.empty());
  CHECK(ds[2].snippet.text.empty());  // a line without a column: no caret to place
  CHECK_FALSE(needs_snippets({at(0, 0)}));
  CHECK_FALSE(needs_snippets({}));
}
