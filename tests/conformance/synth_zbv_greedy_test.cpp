// ppsched's slot-by-slot reorder of V-Half and V-Min (synth/v_slot_reorder.hpp) against the Zero
// Bubble authors' zbv_greedy.py: every case of the corpus in zero-bubble/zbv_greedy.txt (their
// per-rank orders, written by bench/offline/zbv_greedy_orders.py from their code) is reproduced
// action for action, and a case their code fails on fails here too.
#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "synth/v_slot_reorder.hpp"

using namespace ppsched;

namespace {

struct Case {
  std::string mode;
  std::uint32_t ranks = 0, microbatches = 0;
  bool failed = false;
  std::vector<std::string> programs;  // per rank, as the corpus writes it
};

std::vector<Case> corpus() {
  std::ifstream in(std::string(PPSCHED_SOURCE_DIR) + "/tests/conformance/zero-bubble/zbv_greedy.txt");
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("case ", 0) == 0) {
      std::istringstream words(line.substr(5));
      Case c;
      std::string rest;
      words >> c.mode >> c.ranks >> c.microbatches >> rest;
      c.failed = rest == "failed";
      cases.push_back(std::move(c));
    } else if (!cases.empty()) {
      cases.back().programs.push_back(line);
    }
  }
  return cases;
}

std::string text_of(const std::vector<Action>& program) {
  std::string out;
  for (const Action& a : program) {
    if (!out.empty()) out += ' ';
    const char kind = a.kind == ActionKind::F   ? 'F'
                      : a.kind == ActionKind::I ? 'I'
                      : a.kind == ActionKind::W ? 'W'
                                                : '?';
    out += fmt::format("{}{},{}", kind, a.stage, a.microbatch());
  }
  return out;
}

}  // namespace

TEST_CASE("the slot reorder gives zbv_greedy's order on every corpus case") {
  const std::vector<Case> cases = corpus();
  REQUIRE(cases.size() >= 90);
  for (const Case& c : cases) {
    INFO(fmt::format("{} p={} m={}", c.mode, c.ranks, c.microbatches));
    const auto programs = vslot::slot_reordered(c.ranks, c.microbatches, c.mode == "half");
    REQUIRE(programs.has_value() == !c.failed);
    if (c.failed) continue;
    REQUIRE(programs->size() == c.programs.size());
    for (std::size_t r = 0; r < c.programs.size(); ++r) {
      INFO("rank " << r);
      CHECK(text_of((*programs)[r]) == c.programs[r]);
    }
  }
}

TEST_CASE("the slot reorder refuses a single rank") {
  CHECK_FALSE(vslot::slot_reordered(1, 4, true).has_value());
  CHECK_FALSE(vslot::slot_reordered(4, 0, false).has_value());
}
