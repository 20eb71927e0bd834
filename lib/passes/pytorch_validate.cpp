// PyTorch's `_validate_schedule`: what it checks, in its order, with its messages.
//
// It walks ranks then steps (idle steps count as steps), replacing a container that has
// sub-actions by its sub-actions. Per stage it keeps the *sets* of microbatches seen for F, B,
// I and W, so duplicates pass; B and I need the microbatch's F first, W its I. Every action,
// communication included, records its stage's rank, and a second rank for a stage fails. After
// the walk each stage must have M distinct forwards, as many I as W, and B + (I + W) / 2 == M.
// Where PyTorch fails with a bare KeyError (an F/B/I/W on a stage outside 0..num_stages-1),
// this says so in words.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "ir/action_text.hpp"
#include "passes/microbatch_set.hpp"
#include "passes/passes.hpp"
#include "passes/pytorch_view.hpp"

namespace ppsched {

namespace {

enum Kind : std::uint64_t { kF = 0, kB = 1, kI = 2, kW = 3 };

std::uint64_t group(std::uint64_t stage, Kind kind) { return stage << 2 | static_cast<std::uint64_t>(kind); }

std::string python_int(std::uint32_t microbatch) {
  return microbatch == Action::kNoMicrobatch ? "None" : std::to_string(microbatch);
}

// The gaps in PyTorch's messages come from a backslash line continuation inside an f-string:
// the next source line's indentation (12 spaces) is part of the text.
constexpr const char* kContinuation = ",             but got ";

}  // namespace

std::vector<std::uint32_t> pytorch_validate(const Schedule& s, std::uint32_t ranks, std::uint32_t num_stages,
                                            std::uint32_t num_microbatches) {
  if (s.rank_count() != ranks)
    throw PassError("Schedule has incorrect number of ranks - expected " + std::to_string(ranks) + ", actual " +
                    std::to_string(s.rank_count()));

  // Only stages 0..kMaxStage can hold actions; the counts of any further stage stay zero.
  const std::size_t counted = std::min<std::size_t>(num_stages, Action::kMaxStage + 1u);
  std::vector<std::array<std::uint32_t, 4>> count(counted, {0, 0, 0, 0});
  MicrobatchSet seen;
  std::vector<std::uint32_t> stage_to_rank;
  std::uint32_t placeholder_rank = kUnplaced;  // stage -1 (containers), which PyTorch maps too

  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    const auto rank = static_cast<std::uint32_t>(r);
    const auto& program = s.ranks[r].actions;
    for (std::size_t step = 0; step < program.size(); ++step) {
      pytorch::for_each_leaf(s, program[step], [&](const Action& a) {
        const std::int64_t st = pytorch::stage(a);
        const std::uint32_t mb = a.microbatch();
        auto where = [&] { return "Rank " + std::to_string(rank) + ", step " + std::to_string(step) + ": "; };
        auto out_of_order = [&](const char* running, const char* first) {
          throw PassError(where() + "Running " + running + " for stage " + std::to_string(st) + ", microbatch " +
                          python_int(mb) + " without first running " + first)
              .with_grid_step(step);
        };
        const bool fbiw =
            a.kind == ActionKind::F || a.kind == ActionKind::B || a.kind == ActionKind::I || a.kind == ActionKind::W;
        if (fbiw) {
          if (st < 0 || static_cast<std::uint64_t>(st) >= num_stages)
            throw PassError(where() + action_text(a, s.sub_actions) + " is on stage " + std::to_string(st) +
                            ", outside the " + std::to_string(num_stages) +
                            " stages of the schedule (PyTorch: KeyError: " + std::to_string(st) + ")");
          const auto u = static_cast<std::uint64_t>(st);
          auto& c = count[u];
          switch (a.kind) {
            case ActionKind::F:
              c[kF] += seen.insert(group(u, kF), mb);
              break;
            case ActionKind::B:
              if (!seen.contains(group(u, kF), mb)) out_of_order("Full Backward", "Forward");
              c[kB] += seen.insert(group(u, kB), mb);
              break;
            case ActionKind::I:
              if (!seen.contains(group(u, kF), mb)) out_of_order("Backward Input", "Forward");
              c[kI] += seen.insert(group(u, kI), mb);
              break;
            default:
              if (!seen.contains(group(u, kI), mb)) out_of_order("Backward Weight", "Backward Input");
              c[kW] += seen.insert(group(u, kW), mb);
              break;
          }
        }
        std::uint32_t* owner = &placeholder_rank;
        if (st >= 0) {
          const auto u = static_cast<std::size_t>(st);
          if (u >= stage_to_rank.size()) stage_to_rank.resize(u + 1, kUnplaced);
          owner = &stage_to_rank[u];
        }
        if (*owner == kUnplaced) {
          *owner = rank;
        } else if (*owner != rank) {
          throw PassError(where() + "Stage " + std::to_string(st) + " is assigned to both rank " +
                          std::to_string(rank) + " and rank " + std::to_string(*owner));
        }
      });
    }
  }

  const std::string m = std::to_string(num_microbatches);
  for (std::size_t st = 0; st < num_stages; ++st) {
    if (st >= counted) {  // no action can be there: only the forward count can fail
      if (num_microbatches != 0)
        throw PassError("Got 0 _ComputationType.FORWARD microbatches for stage " + std::to_string(st) + ", expected " +
                        m);
      break;
    }
    const auto [f, b, i, w] = count[st];
    const std::string stage = std::to_string(st);
    if (f != num_microbatches)
      throw PassError(
          fmt::format("Got {} _ComputationType.FORWARD microbatches for stage {}, expected {}", f, stage, m));
    if (i != w)
      throw PassError(
          fmt::format("Invalid backward microbatches for stage {}: I and W must have equal counts{}I={}, W={}", stage,
                      kContinuation, i, w));
    if (static_cast<std::uint64_t>(b) + (static_cast<std::uint64_t>(i) + w) / 2 != num_microbatches)
      throw PassError(
          fmt::format("Invalid backward microbatches for stage {}: expected {} total backwards{}B={}, I={}, W={}",
                      stage, m, kContinuation, b, i, w));
  }
  return stage_to_rank;
}

}  // namespace ppsched
