// What each action costs: per stage, per kind, in one time unit (microseconds when measured).
//
// Three sources, later ones overriding earlier ones:
//   - the default: F = I = W = 1, B = I + W = 2, everything else 0 (unit costs);
//   - `--cost F=1,B=2,I=1,W=1`: per-rank costs (the model slice one rank holds); a schedule with
//     v stages per rank divides them by v, so V-schedule chunks cost half. B defaults to I + W;
//   - `--costs FILE`: per stage and kind, a cost table (`stage,kind,time_us` CSV, what
//     `ppsched run --cost-out` writes from the CostRows it measured, or JSON); stages or kinds
//     the file leaves out keep the shorthand's value.
// OVERLAP_F_B costs the sum of its sub-actions times an overlap factor (1 = no overlap).
//
// Plain data only: the shorthand and the cost table are read and written in lib/parse
// (parse/cost_table.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "ir/schedule.hpp"

namespace ppsched {

/// Costs of one stage (or of one rank, in the shorthand), indexed by ActionKind.
using KindCosts = std::array<double, kActionKindCount>;

/// F = I = W = 1, B = 2, all else 0.
KindCosts unit_costs();

/// One row of a cost table: what one action kind costs on one stage.
struct CostRow {
  std::uint32_t stage = 0;
  ActionKind kind = ActionKind::F;
  double time_us = 0;
};

/// The cost of every (stage, kind), and how much OVERLAP_F_B saves.
struct CostModel {
  std::vector<KindCosts> per_stage;  ///< indexed by stage
  double overlap_factor = 1.0;

  /// Every stage gets `per_rank` divided by `stages_per_rank`.
  static CostModel uniform(std::uint32_t num_stages, std::uint32_t stages_per_rank, const KindCosts& per_rank);
  /// A pipeline of `ranks` ranks and `stages` stages, `per_rank` being what one rank's share of
  /// the model costs: each rank holds stages / ranks stages (1 when there are no ranks or fewer
  /// stages than ranks), each costing `per_rank` divided by that. The one place that split is
  /// made: simulate, tune and run (--cost), validate (under --costs) and the deadlock rule.
  static CostModel for_pipeline(std::uint32_t ranks, std::uint32_t stages, const KindCosts& per_rank = unit_costs());

  double cost(std::uint16_t stage, ActionKind kind) const {
    return stage < per_stage.size() ? per_stage[stage][static_cast<std::size_t>(kind)] : 0.0;
  }
  /// Duration of an action (a container: its sub-actions' sum times overlap_factor).
  double duration(const Schedule& s, const Action& a) const;
};

}  // namespace ppsched
