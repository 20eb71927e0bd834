#include "report/toml_text.hpp"

#include "ir/user_error.hpp"
#include "support/catch.hpp"

using namespace ppsched;

TEST_CASE("toml_string: a basic string nothing can close or break") {
  CHECK(toml_string("plain") == "\"plain\"");
  CHECK(toml_string("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(toml_string("x\n[evil]\nk = 1") == "\"x\\n[evil]\\nk = 1\"");
  CHECK(toml_string("t\tr\r") == "\"t\\tr\\r\"");
  CHECK(toml_string(std::string_view("n\0\x1b\x7f", 4)) == "\"n\\u0000\\u001B\\u007F\"");
  CHECK(toml_string("é") == "\"é\"");
}

TEST_CASE("toml_string: a value that is not UTF-8 is refused, naming it") {
  CHECK_THROWS_WITH(toml_string("dir\xff/schedule.csv", "the schedule's path"),
                    "the schedule's path 'dir\\xFF/schedule.csv' is not UTF-8, and a TOML file cannot hold it");
}

TEST_CASE("toml_comment: one line, whatever the text holds") {
  CHECK(toml_comment("time model: A100") == "# time model: A100\n");
  CHECK(toml_comment("A100\n[evil]\nkey = 1\x1b\xff") == "# A100\\x0A[evil]\\x0Akey = 1\\x1B\\xFF\n");
}
