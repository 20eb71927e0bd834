// docs/rules.md has a section for every rule of the table (it is the SARIF helpUri target), and
// no section for a rule that does not exist.
#include <regex>
#include <set>

#include "check/check.hpp"
#include "support/catch.hpp"
#include "support/corpus.hpp"

using namespace ppsched;

TEST_CASE("docs/rules.md has one section per rule") {
  std::string doc = test::read_file(test::source_dir() / "docs" / "rules.md");
  std::set<std::string> sections;
  std::regex heading(R"(\n## ([a-z-]+)\n)");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), heading); it != std::sregex_iterator(); ++it)
    sections.insert((*it)[1]);
  for (const Rule& r : rules()) {
    INFO(r.id);
    CHECK(sections.count(std::string(r.id)) == 1);
  }
  CHECK(sections.size() == rules().size());
}

TEST_CASE("rule ids are unique kebab-case and every rule says how to fix it") {
  std::set<std::string_view> ids;
  std::regex kebab("[a-z]+(-[a-z]+)*");
  for (const Rule& r : rules()) {
    INFO(r.id);
    CHECK(ids.insert(r.id).second);
    CHECK(std::regex_match(std::string(r.id), kebab));
    CHECK_FALSE(r.help.empty());
    CHECK(find_rule(r.id) == &r);
  }
  CHECK(find_rule("no-such-rule") == nullptr);
}
