#include "report/python_text.hpp"

#include "support/catch.hpp"

using namespace ppsched;

TEST_CASE("python_string: quotes, backslashes and controls are escaped, nothing ends the literal") {
  CHECK(python_string("plain") == "\"plain\"");
  CHECK(python_string("") == "\"\"");
  CHECK(python_string("a\"b'c\\d") == "\"a\\\"b'c\\\\d\"");
  CHECK(python_string("x\ny\rz\tw") == "\"x\\ny\\rz\\tw\"");
  CHECK(python_string(std::string_view("n\0\x1b\x7f", 4)) == "\"n\\x00\\x1b\\x7f\"");
  CHECK(python_string("$(rm -rf ~) `id` {x}") == "\"$(rm -rf ~) `id` {x}\"");  // nothing special in Python
}

TEST_CASE("python_string: UTF-8 is kept, C1 and invisible reordering characters are escaped") {
  CHECK(python_string("é ✓ 𝄞") == "\"é ✓ 𝄞\"");
  CHECK(python_string("\xc2\x85") == "\"\\x85\"");  // U+0085, a C1 line break
  CHECK(python_string("a\xe2\x80\xae"
                      "b") == "\"a\\u202eb\"");                              // right-to-left override
  CHECK(python_string("\xe2\x80\xa8\xef\xbb\xbf") == "\"\\u2028\\ufeff\"");  // line separator, BOM
}

TEST_CASE("python_string: bytes that are not UTF-8 become Python's surrogateescape code points") {
  CHECK(python_string("dir\xff/s.csv") == "\"dir\\udcff/s.csv\"");
  CHECK(python_string("\xe2\x82") == "\"\\udce2\\udc82\"");             // a cut sequence, byte by byte
  CHECK(python_string("\xc0\xaf") == "\"\\udcc0\\udcaf\"");             // an overlong '/'
  CHECK(python_string("\xed\xa0\x80") == "\"\\udced\\udca0\\udc80\"");  // an encoded surrogate
  CHECK(python_string("\xe2(") == "\"\\udce2(\"");
}

TEST_CASE("python_comment: one line, whatever the text holds") {
  CHECK(python_comment("time model: H100") == "# time model: H100\n");
  CHECK(python_comment("a\nimport os\r\x1b\xff") == "# a\\x0Aimport os\\x0D\\x1B\\xFF\n");
}

TEST_CASE("python names: identifiers and dotted module names, keywords refused") {
  CHECK(is_python_identifier("llama3_70b"));
  CHECK(is_python_identifier("_base"));
  CHECK(is_python_identifier("match"));  // a soft keyword names a function
  CHECK_FALSE(is_python_identifier(""));
  CHECK_FALSE(is_python_identifier("3b"));
  CHECK_FALSE(is_python_identifier("import"));
  CHECK_FALSE(is_python_identifier("a-b"));
  CHECK_FALSE(is_python_identifier("a b"));
  CHECK_FALSE(is_python_identifier("é"));
  CHECK(is_python_module_name("torchtitan.models.llama3.config_registry"));
  CHECK(is_python_module_name("ppsched_torchtitan_config"));
  CHECK_FALSE(is_python_module_name("a..b"));
  CHECK_FALSE(is_python_module_name(".a"));
  CHECK_FALSE(is_python_module_name("a."));
  CHECK_FALSE(is_python_module_name("a.class"));
  CHECK_FALSE(is_python_module_name("os; import sys"));
}
