// What each action costs: per stage, per kind, in one time unit (microseconds when measured).
//
// Three sources, later ones overriding earlier ones:
//   - the default: F = I = W = 1, B = I + W = 2, everything else 0 (unit costs);
//   - `--cost F=1,B=2,I=1,W=1`: per-rank costs (the model slice one rank holds); a schedule with
//     v stages per rank divides them by v, so V-schedule chunks cost half. B defaults to I + W;
//   - `--costs FILE`: per stage and kind, CSV with a header `stage,kind,time_us` (what
//     `ppsched run --cost-out` writes) or JSON `{"schema_version": 1, "costs": [{"stage": 0,
//     "kind": "F", "time_us": 12.5}, ...]}`; stages or kinds the file leaves out keep the
//     shorthand's value.
// OVERLAP_F_B costs the sum of its sub-actions times an overlap factor (1 = no overlap).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diag/diagnostic.hpp"
#include "ir/schedule.hpp"

namespace ppsched {

/// Costs of one stage (or of one rank, in the shorthand), indexed by ActionKind.
using KindCosts = std::array<double, kActionKindCount>;

/// F = I = W = 1, B = 2, all else 0.
KindCosts unit_costs();

/// Parses "F=1,B=2,I=1,W=1" (any subset, any order; also UNSHARD, RESHARD, REDUCE_GRAD,
/// SEND_F, ...). Values are finite and >= 0. B, when not given, is I + W. On failure returns
/// nullopt and sets `error` to a message naming the bad item.
std::optional<KindCosts> parse_cost_shorthand(std::string_view text, std::string& error);

struct CostModel {
  std::vector<KindCosts> per_stage;  ///< indexed by stage
  double overlap_factor = 1.0;

  /// Every stage gets `per_rank` divided by `stages_per_rank`.
  static CostModel uniform(std::uint32_t num_stages, std::uint32_t stages_per_rank, const KindCosts& per_rank);

  double cost(std::uint16_t stage, ActionKind kind) const {
    return stage < per_stage.size() ? per_stage[stage][static_cast<std::size_t>(kind)] : 0.0;
  }
  /// Duration of an action (a container: its sub-actions' sum times overlap_factor).
  double duration(const Schedule& s, const Action& a) const;
};

/// Reads a cost table (CSV or JSON, chosen by the first non-blank byte) into `model`, which
/// must already have its stages. Every problem is reported with file:line (CSV) or the JSON
/// path; returns false on any error.
bool read_cost_file(const std::string& path, CostModel& model, DiagnosticSink& sink);
/// The same on text in memory, reported as file `name`.
bool read_cost_text(std::string_view name, const std::string& text, CostModel& model, DiagnosticSink& sink);

}  // namespace ppsched
