// PyTorch's lock-step dry run placed action by action (sim/step_moments.hpp) against the lock-step
// loop itself: on every family, lowered, and on thousands of randomly damaged copies (actions
// swapped, dropped, duplicated, moved to another rank, placements changed), the timelines are the
// same, or both fail the same way (the same deadlock with the same partial grid and stuck ranks,
// the same error).
#include <random>
#include <string>

#include "parse/pytorch_csv.hpp"
#include "passes/passes.hpp"
#include "sim/pytorch_steps.hpp"
#include "sim/step_moments.hpp"
#include "support/catch.hpp"
#include "support/family_schedules.hpp"
#include "synth/synth.hpp"

using namespace ppsched;

namespace {

// What a run gives: the timelines as PyTorch's CSV, or what it failed with.
std::string outcome(const Schedule& s, const std::vector<std::uint32_t>& placement, std::uint32_t stages,
                    bool lock_step_only) {
  try {
    const std::string csv =
        to_pytorch_csv(simulate_pytorch_steps(s, placement, stages, kDefaultMaxStepCells, lock_step_only));
    // The CSV written off the programs and the waits, without the timelines, is the same bytes.
    std::string off_waits;
    StringSink sink(off_waits);
    write_pytorch_csv(s, pytorch_step_waits(s, placement, stages, kDefaultMaxStepCells, 0, lock_step_only), sink);
    CHECK(off_waits == csv);
    return csv;
  } catch (const SimDeadlock& d) {
    std::string out = "deadlock\n" + to_pytorch_csv(d.partial());
    for (const auto& st : d.stuck()) out += std::to_string(st.rank) + ":" + std::to_string(st.step) + "\n";
    return out;
  } catch (const std::exception& e) {
    return std::string("error: ") + e.what();
  }
}

bool same_both_ways(const Schedule& s, const std::vector<std::uint32_t>& placement, std::uint32_t stages) {
  const std::string want = outcome(s, placement, stages, true);
  const std::string got = outcome(s, placement, stages, false);
  CHECK(got == want);
  return want.rfind("deadlock", 0) != 0 && want.rfind("error", 0) != 0;
}

}  // namespace

TEST_CASE("placing actions by their moments gives the lock-step loop's timelines on every family") {
  std::size_t runs = 0;
  test::for_each_family_schedule(4, {4u, 8u, 13u}, [&](const Family& family, std::uint32_t m, const Schedule& s) {
    INFO(family.name << " m=" << m);
    const Schedule x = lower_send_recv(s);
    const auto placement = placement_of(x).stage_to_rank;
    CHECK(same_both_ways(x, placement, stated_stages(x)));
    ++runs;
  });
  CHECK(runs > 20);
}

TEST_CASE("the CSV off the waits: ranks of several chunks, idle input steps, empty ranks, LF") {
  // 2 ranks x 70,000 microbatches lowered: 280,000 actions a rank, three chunks of the writer.
  Schedule s = lower_send_recv(synthesize("1F1B", SynthParams{.ranks = 2, .microbatches = 70000}));
  // Idle steps of the input, which the timelines drop, at the start, across a chunk's end, at the end.
  for (std::size_t at : {std::size_t{0}, std::size_t{131071}, std::size_t{131072}, s.ranks[1].actions.size()})
    s.ranks[1].actions.insert(s.ranks[1].actions.begin() + static_cast<std::ptrdiff_t>(at), 2, Action::idle());
  s.ranks.push_back({});                  // a rank with no action
  s.ranks.push_back({{Action::idle()}});  // and one with an idle step only
  const auto placement = placement_of(s).stage_to_rank;
  const Schedule timelines = simulate_pytorch_steps(s, placement, 2);
  const StepWaits waits = pytorch_step_waits(s, placement, 2);
  for (LineEnding eol : {LineEnding::Crlf, LineEnding::Lf}) {
    std::string off_waits;
    StringSink sink(off_waits);
    write_pytorch_csv(s, waits, sink, {eol});
    CHECK((off_waits == to_pytorch_csv(timelines, {eol})));  // not printed: 3 MB each
  }
}

TEST_CASE("placing actions by their moments agrees with the lock-step loop on damaged schedules") {
  std::mt19937 rng(4848);
  std::size_t finished = 0, failed = 0;
  for (const char* family : {"1F1B", "Interleaved1F1B", "ZBV", "GPipe", "ZB-H1", "DualPipeV"}) {
    SynthParams p;
    p.ranks = 4;
    p.microbatches = 8;
    Schedule base;
    try {
      base = lower_send_recv(synthesize(family, p));
    } catch (const SynthError&) {
      continue;
    }
    for (int trial = 0; trial < 400; ++trial) {
      Schedule x = base;
      auto placement = placement_of(x).stage_to_rank;
      const int damages = 1 + trial % 3;
      for (int d = 0; d < damages; ++d) {
        auto& prog = x.ranks[rng() % x.ranks.size()].actions;
        if (prog.size() < 2) continue;
        const std::size_t i = rng() % (prog.size() - 1);
        switch (rng() % 6) {
          case 0:
            std::swap(prog[i], prog[i + 1]);
            break;
          case 1:
            prog.erase(prog.begin() + static_cast<std::ptrdiff_t>(i));
            break;
          case 2:
            prog.insert(prog.begin() + static_cast<std::ptrdiff_t>(i), prog[i]);
            break;
          case 3:
            x.ranks[rng() % x.ranks.size()].actions.push_back(prog[i]);
            break;
          case 4:
            prog.insert(prog.begin() + static_cast<std::ptrdiff_t>(i), Action::idle());
            break;
          default:
            placement[rng() % placement.size()] = static_cast<std::uint32_t>(rng() % x.ranks.size());
        }
      }
      INFO(family << " trial " << trial);
      (same_both_ways(x, placement, stated_stages(x)) ? finished : failed)++;
    }
  }
  // Both kinds of outcome are exercised.
  CHECK(finished > 100);
  CHECK(failed > 100);
}

namespace {

// Two threads, split at every rank, against one: the same waits and timeline lengths, or both none.
void same_split_as_whole(const Schedule& s, const std::vector<std::uint32_t>& placement) {
  const std::int64_t last = static_cast<std::int64_t>(stated_stages(s)) - 1;
  const std::uint32_t mbs = microbatches_in_use(s);
  const std::optional<StepWaits> whole = step_waits_by_moments(s, placement, last, mbs, s.rank_count());
  for (std::size_t mid = 1; mid < s.rank_count(); ++mid) {
    INFO("split at rank " << mid);
    const std::optional<StepWaits> split = step_waits_by_moments(s, placement, last, mbs, mid);
    REQUIRE(split.has_value() == whole.has_value());
    if (!whole) continue;
    CHECK(split->cells == whole->cells);
    REQUIRE(split->waits.size() == whole->waits.size());
    for (std::size_t r = 0; r < whole->waits.size(); ++r) {
      REQUIRE(split->waits[r].size() == whole->waits[r].size());
      for (std::size_t i = 0; i < whole->waits[r].size(); ++i) {
        CHECK(split->waits[r][i].before == whole->waits[r][i].before);
        CHECK(split->waits[r][i].count == whole->waits[r][i].count);
      }
    }
  }
}

}  // namespace

TEST_CASE("placing actions by their moments on two threads, split at every rank, equals one thread") {
  std::mt19937 rng(77);
  test::for_each_family_schedule(4, {4u, 8u, 13u}, [&](const Family& family, std::uint32_t m, const Schedule& s) {
    INFO(family.name << " m=" << m);
    const Schedule x = lower_send_recv(s);
    same_split_as_whole(x, placement_of(x).stage_to_rank);
    // And damaged: a swap or a dropped action makes some runs stop short, on either half.
    for (int trial = 0; trial < 20; ++trial) {
      Schedule y = x;
      auto& prog = y.ranks[rng() % y.ranks.size()].actions;
      const std::size_t i = rng() % (prog.size() - 1);
      if (trial % 2)
        std::swap(prog[i], prog[i + 1]);
      else
        prog.erase(prog.begin() + static_cast<std::ptrdiff_t>(i));
      INFO("trial " << trial);
      same_split_as_whole(y, placement_of(y).stage_to_rank);
    }
  });
  // Long enough for the halves to hand thousands of SENDs across while both run, run after run.
  for (const char* family : {"1F1B", "Interleaved1F1B", "ZBV"}) {
    SynthParams p;
    p.ranks = 8;
    p.microbatches = 512;
    const Schedule x = lower_send_recv(synthesize(family, p));
    INFO(family);
    for (int run = 0; run < 3; ++run) same_split_as_whole(x, placement_of(x).stage_to_rank);
  }
}
