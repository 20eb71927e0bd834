#include "io/log_text.hpp"

#include "support/catch.hpp"

using namespace ppsched;

TEST_CASE("printable: control characters, C1, bidi overrides and non-UTF-8 bytes are shown, not sent") {
  CHECK(printable("plain 0F1, é → ok\tx") == "plain 0F1, é → ok\tx");  // UTF-8 and tab are kept
  CHECK(printable("a\x1b[2Jb") == "a\\x1B[2Jb");
  CHECK(printable(std::string_view("n\0l", 3)) == "n\\x00l");
  CHECK(printable("cr\rlf\n") == "cr\\x0Dlf\\x0A");
  CHECK(printable("del\x7f") == "del\\x7F");
  CHECK(printable("c1 \xc2\x9b"
                  "31m") == "c1 \\u009B31m");  // U+009B is CSI
  CHECK(printable("bidi \xe2\x80\xae") == "bidi \\u202E");
  CHECK(printable("bad \xff\xc3") == "bad \\xFF\\xC3");
  CHECK(printable("overlong \xc0\xaf") == "overlong \\xC0\\xAF");
  CHECK(printable("surrogate \xed\xa0\x80") == "surrogate \\xED\\xA0\\x80");
}

TEST_CASE("printable: the legacy double-hash bracket workflow command is broken anywhere in a line") {
  CHECK(printable("x ##[add-mask]secret") == "x ##\\x5Badd-mask]secret");
  CHECK(printable("#[ok] ##") == "#[ok] ##");
}

TEST_CASE("printable_line and display_path: a value that starts a line never starts a workflow command") {
  CHECK(starts_workflow_command("::add-mask::x"));
  CHECK(starts_workflow_command("  \t::error::x"));
  CHECK_FALSE(starts_workflow_command("a::b"));
  CHECK_FALSE(starts_workflow_command(":x"));
  CHECK(printable_line("::stop-commands::tok") == "\\x3A:stop-commands::tok");
  CHECK(printable_line("  ::x") == "  \\x3A:x");
  CHECK(printable_line("a::b") == "a::b");
  CHECK(display_path("::add-mask::s.csv") == "./::add-mask::s.csv");
  CHECK(display_path(" ::x.csv") == "./ ::x.csv");
  CHECK(display_path("dir/s.csv") == "dir/s.csv");
  CHECK(display_path("/abs/s\x1b.csv") == "/abs/s\\x1B.csv");
  CHECK(display_path("-") == "-");
}

TEST_CASE("is_utf8") {
  CHECK(is_utf8("ascii é 😀"));
  CHECK_FALSE(is_utf8("\xff"));
  CHECK_FALSE(is_utf8("\xe2\x82"));  // cut short
}

TEST_CASE("utf8_at: one sequence's length and code point, 0 where the bytes are not UTF-8") {
  std::uint32_t cp = 0;
  CHECK(utf8_at("a", 0, cp) == 1);
  CHECK(cp == 'a');
  CHECK(utf8_at("x\xc3\xa9", 1, cp) == 2);
  CHECK(cp == 0xE9);
  CHECK(utf8_at("\xf0\x9d\x84\x9e", 0, cp) == 4);
  CHECK(cp == 0x1D11E);
  CHECK(utf8_at("\xff", 0, cp) == 0);
  CHECK(utf8_at("\xe2\x82", 0, cp) == 0);      // cut short
  CHECK(utf8_at("\xc0\xaf", 0, cp) == 0);      // overlong
  CHECK(utf8_at("\xed\xa0\x80", 0, cp) == 0);  // a surrogate
}

TEST_CASE("LogGuard: lines keep their shape, each line's start and every control is neutralised") {
  CHECK(guarded("a,b\r\nc\n") == "a,b\r\nc\n");  // CRLF and newlines kept
  CHECK(guarded("ok\n::add-mask::x\n  ::error::y\n") == "ok\n\\x3A:add-mask::x\n  \\x3A:error::y\n");
  CHECK(guarded("a::b\n:c\n") == "a::b\n:c\n");
  CHECK(guarded("x\x1b]0;title\x07y") == "x\\x1B]0;title\\x07y");
  CHECK(guarded("lone\rcr") == "lone\\x0Dcr");
  CHECK(guarded("end\r") == "end\\x0D");
  CHECK(guarded("c1\xc2\x9b!\xc2\xa9") == "c1\\u009B!\xc2\xa9");
  CHECK(guarded("##[group]x") == "##\\x5Bgroup]x");
  CHECK(guarded(":") == ":");
}

TEST_CASE("LogGuard: the same answer however the bytes are cut into chunks") {
  const std::string text = "ok\n::add-mask::x\r\n\t::y\xc2\x9b\r##[z\n:";
  const std::string whole = guarded(text);
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    LogGuard g;
    std::string out;
    g.feed(std::string_view(text).substr(0, cut), out);
    g.feed(std::string_view(text).substr(cut), out);
    g.finish(out);
    CHECK(out == whole);
  }
  CHECK(whole == "ok\n\\x3A:add-mask::x\r\n\t\\x3A:y\\u009B\\x0D##\\x5Bz\n:");
}
