// Whether a cost table covers what a schedule runs.
//
// A cost table (parse/cost_table.hpp) overrides the costs a CostModel was pre-filled with (unit
// costs, or the --cost shorthand). What it leaves out would keep those values, which are in
// another unit than a measured table's microseconds, and the simulation would quietly mix the two.
// So the reader records which (stage, kind) the table gave (CostCoverage), and the commands that
// simulate compare that with the compute kinds each stage runs (first_missing_cost): a gap is an
// error unless the user asks for the old filling (--fill unit).
//
// Only compute kinds count (F, B, I, W; OVERLAP_F_B is its parts): transfers are priced by the
// topology, and UNSHARD, RESHARD and REDUCE_GRAD cost nothing unless given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "ir/schedule.hpp"

namespace ppsched {

/// A set of action kinds, as bits 1 << ActionKind.
using KindSet = std::uint32_t;

constexpr KindSet kind_bit(ActionKind k) { return KindSet{1} << static_cast<unsigned>(k); }

/// F, B, I and W: the kinds a cost table must price.
inline constexpr KindSet kComputeKinds =
    kind_bit(ActionKind::F) | kind_bit(ActionKind::B) | kind_bit(ActionKind::I) | kind_bit(ActionKind::W);

/// Which (stage, kind) a cost table gave a time for.
struct CostCoverage {
  std::vector<KindSet> given;  ///< indexed by stage; a stage past the end has none

  void add(std::uint32_t stage, ActionKind kind);
  KindSet at(std::uint32_t stage) const { return stage < given.size() ? given[stage] : 0; }
};

/// Per stage (`stages` of them), the compute kinds of kComputeKinds that `s` runs there,
/// container parts included. A stage at or beyond `stages` is left out.
std::vector<KindSet> compute_kinds_by_stage(const Schedule& s, std::uint32_t stages);

/// What a caller that does not know the schedule must ask for: every compute kind on every
/// stage (tune compares families that run B with families that run I and W).
std::vector<KindSet> every_compute_kind(std::uint32_t stages);
/// F on every stage: what any schedule runs, the least a table must time to price one.
std::vector<KindSet> forward_on_every_stage(std::uint32_t stages);

/// A (stage, kind) that a schedule runs and a cost table does not price.
struct MissingCost {
  std::uint32_t stage = 0;
  /// The first missing kind, in the order F, B, I, W; nullopt when the table has no row for the
  /// stage at all (then every kind it runs is missing).
  std::optional<ActionKind> kind;
};

/// The first stage, in stage order, that runs a kind of `needed` that `given` lacks; nullopt
/// when the table covers everything.
std::optional<MissingCost> first_missing_cost(std::span<const KindSet> needed, const CostCoverage& given);

/// How many (stage, kind) pairs of `needed` `given` lacks.
std::size_t count_missing_costs(std::span<const KindSet> needed, const CostCoverage& given);

}  // namespace ppsched
