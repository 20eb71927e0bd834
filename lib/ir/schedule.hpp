// The schedule: per-rank programs, the sub-actions of containers, placement and sizes.
//
// This is the whole IR that readers and synthesizers produce and that passes, checks, the
// simulator and the GPU runner consume. It knows nothing of files, costs or output.
// Source locations of parsed actions live beside it in a SourceMap, not inside it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ir/action.hpp"
#include "ir/placement.hpp"

namespace ppsched {

/// Sub-actions of container actions, stored once in a flat array (CSR layout):
/// group g is items[offsets[g] .. offsets[g+1]).
class SubActionTable {
 public:
  /// Stores a group and returns its index.
  std::uint32_t add(std::span<const Action> actions);
  std::span<const Action> group(std::uint32_t g) const {
    return {items_.data() + offsets_[g], items_.data() + offsets_[g + 1]};
  }
  std::size_t group_count() const { return offsets_.size() - 1; }
  std::size_t action_count() const { return items_.size(); }

 private:
  std::vector<Action> items_;
  std::vector<std::uint32_t> offsets_{0};
};

/// The ordered actions of one rank. Idle steps are kept: they matter to the CSV bytes.
struct RankProgram {
  std::vector<Action> actions;
};

/// A pipeline schedule. num_stages and num_microbatches are 0 when the source did not state
/// them (a CSV file does not); stated_stages and stages_in_use (and their microbatch twins) give
/// a usable value either way.
struct Schedule {
  std::vector<RankProgram> ranks;
  SubActionTable sub_actions;
  Placement placement;
  std::uint32_t num_stages = 0;
  std::uint32_t num_microbatches = 0;

  std::size_t rank_count() const { return ranks.size(); }
  /// Steps over all ranks, idle steps included.
  std::size_t step_count() const;
  /// Non-idle steps over all ranks (a container counts once).
  std::size_t action_count() const;
  /// Sub-actions of a container action.
  std::span<const Action> subs(const Action& a) const { return sub_actions.group(a.group()); }
};

/// A schedule with the same ranks (empty programs), sub-action table, sizes and placement as `s`:
/// what a pass starts its output from.
Schedule empty_like(const Schedule& s);

/// 1 + the largest stage index mentioned anywhere (sub-actions included); 0 if none.
std::uint32_t infer_stage_count(const Schedule& s);
/// 1 + the largest microbatch index mentioned anywhere; 0 if none.
std::uint32_t infer_microbatch_count(const Schedule& s);

/// Whether any rank's program has a SEND or RECV: a compute_comms schedule rather than a
/// compute-only one (containers hold compute only).
bool has_comms(const Schedule& s);

/// The stage count as the schedule states it, else as its actions imply (PyTorch's num_stages:
/// what a pass or a check treats as the pipeline's size, so a stage beyond it is an error).
std::uint32_t stated_stages(const Schedule& s);
/// The microbatch count as stated, else as its actions imply.
std::uint32_t stated_microbatches(const Schedule& s);
/// Every stage an array indexed by stage must hold: the stated count, or more when an action
/// names a stage beyond it (a simulator or the runner sizes its state by this, and reports the
/// stray action rather than indexing past its arrays).
std::uint32_t stages_in_use(const Schedule& s);
/// Every microbatch an array indexed by microbatch must hold (as stages_in_use).
std::uint32_t microbatches_in_use(const Schedule& s);

/// PyTorch's inference when it loads a schedule: each stage goes to the first rank (in rank
/// order, then step order) whose program mentions it. Stages never mentioned map to
/// kUnplaced. The result's style is Explicit.
inline constexpr std::uint32_t kUnplaced = 0xFFFFFFFF;
Placement infer_placement(const Schedule& s);
/// infer_placement's and infer_microbatch_count's answers from one pass over the actions, for a
/// caller that needs both (resolve_context, on every file validate or simulate reads).
struct InferredShape {
  Placement placement;
  std::uint32_t microbatches = 0;
};
InferredShape infer_shape(const Schedule& s);
/// infer_shape's answer gathered a rank at a time, in any order (each stage keeps the lowest rank
/// that runs it): what a reader learns of the schedule while each row is at hand, each half of the
/// rows on its own thread, instead of a pass over every action afterwards.
class ShapeGatherer {
 public:
  /// Rank `rank`'s program; `subs` holds its containers' sub-actions.
  void add_rank(std::uint32_t rank, std::span<const Action> program, const SubActionTable& subs);
  /// A rank's plain actions (no container) one at a time, in program order, for a reader that has
  /// each at hand as it parses it; done() adds them. Adding an action twice changes nothing.
  class Rank {
   public:
    Rank(ShapeGatherer& to, std::uint32_t rank) : to_(to), rank_(rank) {}
    // A rank's program runs the same stage for long stretches (all of it with one stage per
    // rank): an action whose stage is the one before it was placed already, which one compare tells.
    void add(const Action& a) {
      microbatches_ = std::max(microbatches_, a.index + 1u);  // idle: kNoMicrobatch + 1 wraps to 0
      if (a.stage != last_ && a.has_stage()) {                // idle steps have no stage
        to_.place(a.stage, rank_);
        last_ = a.stage;
      }
    }
    void done() { to_.microbatches_ = std::max(to_.microbatches_, microbatches_); }

   private:
    ShapeGatherer& to_;
    std::uint32_t rank_;
    std::uint16_t last_ = Action::kNoStage;
    std::uint32_t microbatches_ = 0;
  };
  /// Adds what `other` gathered, its ranks numbered from `first_rank` on.
  void merge(const ShapeGatherer& other, std::uint32_t first_rank);
  /// infer_shape of a schedule whose every rank was added (and no other).
  InferredShape result() const;

 private:
  void place(std::uint16_t stage, std::uint32_t rank) {
    if (stage >= rank_of_.size()) rank_of_.resize(stage + std::size_t{1}, kUnplaced);
    if (rank < rank_of_[stage]) rank_of_[stage] = rank;
  }
  std::vector<std::uint32_t> rank_of_;  ///< per stage: the lowest rank that runs it, or kUnplaced
  std::uint32_t microbatches_ = 0;      ///< 1 + the largest microbatch
};
/// The placement the schedule states, else infer_placement's: where PyTorch runs each stage.
Placement placement_of(const Schedule& s);
/// placement_of's stage -> rank map, long enough for stages_in_use: a stage beyond it goes to
/// rank 0. What arrays indexed by stage (a memory model, a run plan) are built from.
std::vector<std::uint32_t> stage_to_rank_in_use(const Schedule& s);
/// The same from `placed`, which is placement_of(s): for a caller that needs both, one pass fewer.
std::vector<std::uint32_t> stage_to_rank_in_use(const Schedule& s, const Placement& placed);

/// True when both schedules have the same programs, action for action, with containers
/// compared by their sub-actions (group numbers may differ), and the same stated sizes
/// and placement.
bool same_schedule(const Schedule& a, const Schedule& b);

/// The columns where one rank's cells start (1-based), in step order, at about one byte a step:
/// the distance from the step before, with the exact column of every 64th step, and of a step
/// whose distance does not fit a byte, kept aside. A schedule's cells are a few bytes wide, so
/// this is a quarter of an array of columns, and the source map of a 6M-action file costs 6 MB,
/// not 25 (issue 48). Columns must not decrease.
class StepColumns {
 public:
  void reserve(std::size_t steps) {
    steps_.reserve(steps);
    every_64th_.reserve(steps / 64 + 1);
  }
  /// Inline for the common step (a small distance, not a 64th): the CSV reader calls it per cell.
  void push_back(std::uint32_t column) {
    const std::uint32_t distance = column - last_;
    if (steps_.size() % 64 != 0 && column >= last_ && distance < kAside) {
      steps_.push_back(static_cast<std::uint8_t>(distance));
      last_ = column;
      return;
    }
    push_back_rare(column);
  }
  std::size_t size() const { return steps_.size(); }
  /// The column of step `step` (< size()).
  std::uint32_t operator[](std::size_t step) const;

 private:
  void push_back_rare(std::uint32_t column);                    ///< a 64th step, or a column kept aside
  static constexpr std::uint8_t kAside = 0xFF;                  ///< the step's column is in aside_
  std::vector<std::uint8_t> steps_;                             ///< distance from the step before; 0 at every 64th step
  std::vector<std::uint32_t> every_64th_;                       ///< column of step 64k
  std::vector<std::pair<std::uint32_t, std::uint32_t>> aside_;  ///< (step, column), by step
  std::uint32_t last_ = 0;
};

/// Where each parsed action came from. One line per rank and one column per step, so the
/// cost is about a byte per action; positions are 1-based, 0 when unknown (e.g. JSON input).
struct SourceMap {
  std::string file;
  std::vector<std::uint32_t> rank_line;
  std::vector<StepColumns> step_column;

  std::uint32_t line(std::size_t rank) const { return rank < rank_line.size() ? rank_line[rank] : 0; }
  std::uint32_t column(std::size_t rank, std::size_t step) const {
    return rank < step_column.size() && step < step_column[rank].size() ? step_column[rank][step] : 0;
  }
};

}  // namespace ppsched
