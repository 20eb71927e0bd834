#include "parse/json_locate.hpp"

#include "support/catch.hpp"

using namespace ppsched;

TEST_CASE("locate_json_path finds values by key and index") {
  const std::string_view text =
      "\xEF\xBB\xBF{ \"a\": {\"x\": \"}]\\\"\", \"b\": [1, [2, 3], {\"k\": null}]},\n  \"p\": [[\"0F0\"], [\"1F0\", "
      "\"1Q0\"]] }";
  auto at = [&](std::string_view path) -> std::string_view {
    auto i = locate_json_path(text, path);
    return i ? text.substr(*i, 5) : std::string_view("none");
  };
  CHECK(at("$") == "{ \"a\"");
  CHECK(at("$.a.b") == "[1, [");
  CHECK(at("$.a.b[1][1]") == "3], {");
  CHECK(at("$.a.b[2].k") == "null}");
  CHECK(at("$.p[1][1]") == "\"1Q0\"");
  CHECK(at("$.p[2]") == "none");
  CHECK(at("$.missing") == "none");
  CHECK(at("$.a.x[0]") == "none");
  CHECK(at("programs") == "none");
}

TEST_CASE("locate_json_path skips deep nesting without recursion") {
  std::string deep = "{\"skip\": " + std::string(200000, '[') + std::string(200000, ']') + ", \"k\": 7}";
  auto i = locate_json_path(deep, "$.k");
  REQUIRE(i);
  CHECK(deep[*i] == '7');
}

TEST_CASE("find_duplicate_key finds a key given twice in one object, at any depth") {
  CHECK_FALSE(find_duplicate_key(R"({"a": 1, "b": {"a": 2}, "c": [{"a": 3}, {"a": 4}]})"));
  CHECK_FALSE(find_duplicate_key(R"({"a": "\"a\": 1", "b": ["a", "a"]})"));  // strings and values are not keys
  auto d = find_duplicate_key(R"({"x": [{"k": 1, "j": 2, "k": 3}]})");
  REQUIRE(d);
  CHECK(d->key == "k");
  CHECK(d->first == 8);
  CHECK(d->second == 24);
  auto top = find_duplicate_key("{\"a\": {\"b\": 1}, \"a\": 2}");
  REQUIRE(top);
  CHECK(top->first == 1);
  CHECK(top->second == 16);
  CHECK_FALSE(find_duplicate_key(std::string(100000, '[') + std::string(100000, ']')));
}
