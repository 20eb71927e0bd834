#include "report/ascii_gantt.hpp"

#include <stdexcept>
#include <vector>

#include "support/built_timeline.hpp"
#include "support/catch.hpp"

using namespace ppsched;

namespace {

using Built = test::BuiltTimeline;

Action F(std::uint16_t stage, std::uint32_t mb) { return Action::make(ActionKind::F, stage, mb); }
Action B(std::uint16_t stage, std::uint32_t mb) { return Action::make(ActionKind::B, stage, mb); }

// Two ranks of a 1F1B pipeline, 2 microbatches, F costs 1 and B costs 2:
//   rank 0: 0F0 [0,1] 0F1 [1,2]            0B0 [4,6]     0B1 [7,9]
//   rank 1:           1F0 [1,2] 1B0 [2,4] 1F1 [4,5] 1B1 [5,7]
// plus a SEND on rank 0's send stream, which the chart must ignore.
Built two_rank_1f1b() {
  Built b(2);
  b.run(0, F(0, 0), 0, 1)
      .run(0, Action::make(ActionKind::SendF, 0, 0), 1, 1.5, Stream::Send)
      .run(0, F(0, 1), 1, 2)
      .idle_step(0)
      .run(0, B(0, 0), 4, 6)
      .run(0, B(0, 1), 7, 9);
  b.run(1, F(1, 0), 1, 2).run(1, B(1, 0), 2, 4).run(1, F(1, 1), 4, 5).run(1, B(1, 1), 5, 7);
  return b;
}

}  // namespace

TEST_CASE("ascii gantt: one column per time unit shows each unit's action") {
  // Makespan 9 over 9 columns: column c is [c, c+1). The send stream is not drawn. The scale
  // puts round times (step 5) under their columns and the makespan under the closing bar.
  Built b = two_rank_1f1b();
  AsciiOptions opt;
  opt.width = 9;
  CHECK(ascii_gantt(b.s, b.build(9), opt) ==
        "rank 0 |FF..BB.BB|\n"
        "rank 1 |.FBBFBB..|\n"
        "        0    5   9\n"
        "F forward, B backward, I input grad, W weight grad, O OVERLAP_F_B, . idle; 1 column = 1\n");
}

TEST_CASE("ascii gantt: a column shows the kind that takes most of its time, idle included") {
  // 6 columns of 1.5 units. Rank 0, column [1.5,3): F 0.5 against idle 1 -> idle. Rank 1,
  // column [3,4.5): B 1 against F 0.5 -> B; column [6,7.5): B 1 against idle 0.5 -> B.
  Built b = two_rank_1f1b();
  AsciiOptions opt;
  opt.width = 6;
  opt.legend = false;
  CHECK(ascii_gantt(b.s, b.build(9), opt) ==
        "rank 0 |F..B.B|\n"
        "rank 1 |.BBBB.|\n"
        "        0  5  9\n");
}

TEST_CASE("ascii gantt: I, W, OVERLAP_F_B and non-compute kinds on the compute stream") {
  // Columns of 1 unit. A tie (0.5 F, 0.5 B in column 5) goes to F, the earlier symbol; a tie
  // between an action and idle (column 7: 0.5 W) goes to the action. UNSHARD and REDUCE_GRAD
  // ran on the compute stream, so they show (u, g) and the legend names them.
  Built b(1);
  SubActionTable& subs = b.s.sub_actions;
  const Action fb[] = {F(0, 1), B(0, 0)};
  const std::uint32_t group = subs.add(fb);
  b.run(0, Action::make(ActionKind::Unshard, 0), 0, 1)
      .run(0, Action::make(ActionKind::I, 0, 0), 1, 3)
      .run(0, Action::container(ActionKind::OverlapFB, group), 3, 5)
      .run(0, F(0, 2), 5, 5.5)
      .run(0, B(0, 2), 5.5, 6)
      .run(0, Action::make(ActionKind::W, 0, 0), 6, 7.5)
      .run(0, Action::make(ActionKind::ReduceGrad, 0), 8, 9);
  AsciiOptions opt;
  opt.width = 9;
  CHECK(ascii_gantt(b.s, b.build(9), opt) ==
        "rank 0 |uIIOOFWWg|\n"
        "        0    5   9\n"
        "F forward, B backward, I input grad, W weight grad, O OVERLAP_F_B, u UNSHARD, "
        "g REDUCE_GRAD, . idle; 1 column = 1\n");
}

TEST_CASE("ascii gantt: a hundred columns by default, rank numbers aligned, deterministic") {
  Built b(11);
  for (std::size_t r = 0; r < 11; ++r) b.run(r, F(static_cast<std::uint16_t>(r), 0), static_cast<double>(r), r + 1.0);
  const Timeline t = b.build(11);
  const std::string chart = ascii_gantt(b.s, t);
  CHECK(chart == ascii_gantt(b.s, t));
  CHECK(chart.rfind("rank  0 |", 0) == 0);
  CHECK(chart.find("\nrank 10 |") != std::string::npos);
  const auto first_line = chart.substr(0, chart.find('\n'));
  CHECK(first_line.size() == std::string("rank  0 |").size() + 100 + 1);
  // Rank 0 runs over the first 1/11 of the time: columns 0..8 are F (9.09 columns).
  CHECK(first_line.substr(9, 10) == "FFFFFFFFF.");
}

TEST_CASE("ascii gantt: an empty timeline is all idle, bad input is refused") {
  Built b(2);
  AsciiOptions opt;
  opt.width = 4;
  opt.legend = false;
  CHECK(ascii_gantt(b.s, b.build(0), opt) == "rank 0 |....|\nrank 1 |....|\n        0\n");

  opt.width = 0;
  CHECK_THROWS_AS(ascii_gantt(b.s, b.build(0), opt), std::invalid_argument);
  Built other(3);
  CHECK_THROWS_AS(ascii_gantt(b.s, other.build(0)), std::invalid_argument);
  Built c = two_rank_1f1b();
  Timeline t = c.build(9);
  t.step[0] = 99;
  CHECK_THROWS_AS(ascii_gantt(c.s, t), std::logic_error);
}
