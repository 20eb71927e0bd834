// add_send_recv's two ways held to each other (passes.hpp): the rounds, computed and then
// assembled, give exactly the round robin's output wherever they apply, and leave the rest to it.
#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "passes/passes.hpp"
#include "support/schedule_text.hpp"
#include "synth/synth.hpp"

using namespace ppsched;
using namespace ppsched::test;

namespace {

// The rounds' output, which must exist unless the schedule has containers, against the round robin's.
void check_same(const Schedule& s, const std::string& what) {
  INFO(what);
  const std::vector<std::uint32_t>& map = s.placement.stage_to_rank;
  const std::uint32_t stages = stated_stages(s);
  const std::optional<Schedule> by_rounds = add_send_recv_by_rounds(s, map, stages);
  const bool containers = std::any_of(s.ranks.begin(), s.ranks.end(), [](const RankProgram& p) {
    return std::any_of(p.actions.begin(), p.actions.end(), [](const Action& a) { return a.is_container(); });
  });
  if (containers) {  // DualPipeV's OVERLAP_F_B: the round robin's alone
    CHECK_FALSE(by_rounds);
    return;
  }
  REQUIRE(by_rounds);
  const Schedule reference = add_send_recv_round_robin(s, map, stages);
  REQUIRE(by_rounds->ranks.size() == reference.ranks.size());
  for (std::size_t r = 0; r < reference.ranks.size(); ++r) {
    INFO("rank " << r);
    CHECK(by_rounds->ranks[r].actions == reference.ranks[r].actions);
  }
}

// `s` with idle steps put at random places: each costs its rank a round, which moves where the
// RECVs of the others land.
Schedule with_idle_steps(Schedule s, std::mt19937& rng) {
  for (RankProgram& p : s.ranks) {
    std::vector<Action> out;
    for (const Action& a : p.actions) {
      while (rng() % 4 == 0) out.push_back(Action::idle());
      out.push_back(a);
    }
    p.actions = std::move(out);
  }
  return s;
}

std::optional<Schedule> by_rounds_of(std::string_view csv, std::vector<std::uint32_t> map, std::uint32_t stages) {
  return add_send_recv_by_rounds(schedule_from_csv(csv), map, stages);
}

}  // namespace

TEST_CASE("add_send_recv by rounds: every family, with and without idle steps, as the round robin") {
  std::mt19937 rng(11);
  int checked = 0;
  for (const Family& f : families()) {
    for (const SynthParams p : {SynthParams{2, 2, 0, false}, SynthParams{4, 8, 0, false}, SynthParams{3, 7, 0, false},
                                SynthParams{8, 16, 0, false}}) {
      Schedule s;
      try {
        s = synthesize(f.name, p);
      } catch (const SynthError&) {
        continue;  // a family that needs other sizes
      }
      const std::string what =
          std::string(f.name) + " " + std::to_string(p.ranks) + "x" + std::to_string(p.microbatches);
      check_same(s, what);
      check_same(with_idle_steps(s, rng), what + " with idle steps");
      ++checked;
    }
  }
  CHECK(checked > 40);
}

TEST_CASE("add_send_recv by rounds: a schedule of a million steps, assembled on two threads") {
  const Schedule s = synthesize("1F1B", {8, 66000, 0, false});
  REQUIRE(s.step_count() >= std::size_t{1} << 20);
  check_same(s, "1F1B 8x66000");
}

TEST_CASE("add_send_recv by rounds: what it leaves to the round robin") {
  CHECK(by_rounds_of("0F0,0F1,,0B0,,0B1\n,1F0,1B0,1F1,1B1,\n", {0, 1}, 2));       // PyTorch's own case: it applies
  CHECK_FALSE(by_rounds_of("0F0,(0F1;3B0)OVERLAP_F_B\n1F0\n", {0, 1, 1, 0}, 4));  // a container
  CHECK_FALSE(by_rounds_of("0F0,0SEND_F0\n1RECV_F0,1F0\n", {0, 1}, 2));           // comms in the input
  CHECK_FALSE(by_rounds_of("0F0,1F0\n1B0\n", {0, 1}, 2));                         // off its stage's rank
  CHECK_FALSE(by_rounds_of("0F0,0F0\n1F0\n", {0, 1}, 2));                         // a duplicated action
  CHECK_FALSE(by_rounds_of("0B0\n,1F0\n", {0, 1}, 2));                            // a wait cycle: stuck
  CHECK_FALSE(by_rounds_of("1F0,0F0\n", {0, 0}, 2));                              // waits on its own rank forever
  CHECK_FALSE(by_rounds_of("0F0\n\n", {0, 1}, 2));                                // a rank with no steps
  CHECK_FALSE(by_rounds_of("0F0\n1F0\n", {0}, 3));                                // a stage with no rank
  CHECK_FALSE(by_rounds_of("0F0\n", {0, 1}, 2));                                  // a rank the schedule lacks
}
