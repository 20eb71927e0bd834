// The family registry's columns: tune's default set, the automatic search's families and order,
// the prefix builders, and the one test for "auto".
#include <string_view>
#include <vector>

#include "support/catch.hpp"
#include "synth/synth.hpp"

using namespace ppsched;

namespace {

std::vector<std::string_view> search_order(std::uint32_t stages_per_rank) {
  std::vector<std::string_view> names;
  for (std::uint8_t place = 1; place < 16; ++place)
    for (const Family& f : families())
      if (f.auto_search_order == place && f.default_stages_per_rank == stages_per_rank) names.push_back(f.name);
  return names;
}

}  // namespace

TEST_CASE("tune's default families are every family but LoopedBFS and the reordered V patterns, in registry order") {
  const std::vector<std::string_view> expected{
      "GPipe", "1F1B", "Interleaved1F1B", "InterleavedZeroBubble", "ZBVZeroBubble", "DualPipeV", "ZBH1", "ZBH2",
      "VHalf", "VMin"};
  CHECK(tune_default_families() == expected);
  for (std::string_view name : tune_default_families()) CHECK(find_family(name) != nullptr);
}

TEST_CASE("the automatic search's families, in its order, for one and two stages per rank") {
  CHECK(search_order(1) == std::vector<std::string_view>{"ZBH1", "ZBH2", "1F1B", "GPipe"});
  CHECK(search_order(2) == std::vector<std::string_view>{"ZBVZeroBubble", "VHalf", "VMin"});
  for (const Family& f : families()) {
    if (f.auto_search_order == 0) continue;
    INFO(f.name);
    // The search builds one stage per rank in loop placement and two in V, and never another count.
    CHECK(f.fixed_stages_per_rank);
    CHECK(f.placement == (f.default_stages_per_rank == 2 ? PlacementStyle::V : PlacementStyle::Loop));
  }
}

TEST_CASE("only V-Half and V-Min have a prefix builder") {
  for (const Family& f : families()) {
    INFO(f.name);
    const bool cut = f.name == "VHalf" || f.name == "VMin";
    CHECK((f.build_prefix != nullptr) == cut);
  }
}

TEST_CASE("is_auto_schedule is \"auto\" in any case, and nothing else") {
  for (std::string_view yes : {"auto", "AUTO", "Auto", "aUtO"}) CHECK(is_auto_schedule(yes));
  for (std::string_view no : {"", "aut", "autos", " auto", "auto ", "ZBH1", "a"}) CHECK_FALSE(is_auto_schedule(no));
  for (const Family& f : families()) CHECK_FALSE(is_auto_schedule(f.name));
}
