// Activation memory over time, from a schedule and its timeline.
//
// Model (Zero Bubble paper's accounting): a forward F allocates its stage's activation M_B when it
// starts; an input-gradient backward I frees M_B - M_W when it ends; the weight-gradient W frees
// the remaining M_W when it ends; a full backward B frees M_B when it ends. Sizes come from the
// stage spec (bytes) or default to units where one microbatch's activation of a whole rank is 1
// (a chunk of a rank with v stages holds 1/v) and M_W = M_B (conservative: nothing is released
// before W). A fixed per-rank term (parameters, optimizer) can be added. A checkpointed stage
// (model/recompute.hpp) is the same rule with other sizes: F keeps only what checkpointing keeps,
// and I leaves what W reads; MemoryModel::from_stage_spec chooses them.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/schedule.hpp"
#include "model/comm.hpp"
#include "sim/timeline.hpp"

namespace ppsched {

struct MemoryModel {
  std::vector<double> activation;      ///< M_B per stage (held from F to its backward); empty: 1/v per stage
  std::vector<double> weight_grad;     ///< M_W per stage (held from I to W); empty: equal to M_B
  std::vector<double> fixed_per_rank;  ///< parameters and optimizer state; empty: 0
  bool in_bytes = false;               ///< true when the sizes are bytes (from a stage spec)

  /// M_B of `stage` in a pipeline of `ranks` ranks and `stages` stages: the stated value, else
  /// the unit default (a rank's activation is 1, split evenly over its stages).
  double activation_of(std::uint32_t stage, std::size_t ranks, std::uint32_t stages) const;
  /// M_W of `stage`: the stated value, else M_B.
  double weight_grad_of(std::uint32_t stage, std::size_t ranks, std::uint32_t stages) const;
  /// The same model with every stage's M_B and M_W stated and multiplied by `factor` (a microbatch
  /// of `factor` samples when the sizes are per sample); the fixed term is kept.
  MemoryModel scaled(double factor, std::size_t ranks, std::uint32_t stages) const;

  /// The model a stage spec states, in bytes: each stage's M_B and M_W, and on each rank the
  /// weight_bytes of the stages `stage_to_rank` puts there. Every command that reads a stage spec
  /// builds its memory model here, so a peak means the same to each: weights plus live activations.
  static MemoryModel from_stage_spec(const std::vector<StageSpec>& spec,
                                     const std::vector<std::uint32_t>& stage_to_rank, std::uint32_t ranks);
};

/// Whether a peak fits under a memory cap (cap <= 0: no cap). The one test every command and the
/// search use: a peak within a relative 1e-9 of the cap fits, since sums of fractions such as 1/3
/// are not exact and a byte-sized cap needs a tolerance of its own scale.
constexpr bool fits_under_cap(double peak, double cap) {
  return cap <= 0 || peak <= cap + 1e-9 * (cap > 1 ? cap : 1.0);
}

/// The model's rule for one action (see the top of this file), shared by every place that
/// accounts memory so that they agree bit for bit: by how much it changes its rank's memory, given
/// its stage's M_B and M_W, and when (an allocation at its start, a free at its end).
struct MemoryDelta {
  enum When : std::uint8_t { Never, AtStart, AtEnd };
  double amount = 0;
  When when = Never;  ///< Never: the action holds no activation (comms, idle, ...)
};
constexpr MemoryDelta memory_delta(ActionKind kind, double m_b, double m_w) {
  switch (kind) {
    case ActionKind::F:
      return {m_b, MemoryDelta::AtStart};
    case ActionKind::I:
      return {-(m_b - m_w), MemoryDelta::AtEnd};
    case ActionKind::W:
      return {-m_w, MemoryDelta::AtEnd};
    case ActionKind::B:
      return {-m_b, MemoryDelta::AtEnd};
    default:
      return {};
  }
}

/// A rank's memory as its events are applied one after another: the level, and the peak under
/// compute_memory's rule (a level counts as higher only beyond a 1e-12 rounding margin), so that
/// every place that replays a rank's events in order agrees with it bit for bit.
struct RunningPeak {
  double level, peak;
  explicit constexpr RunningPeak(double base) : level(base), peak(base) {}
  constexpr void add(double amount) {
    level += amount;
    if (level > peak + 1e-12) peak = level;
  }
};

struct MemoryPoint {
  double time;
  double value;  ///< memory in use from this time on
};

struct MemoryProfile {
  std::vector<std::vector<MemoryPoint>> per_rank;  ///< step function per rank, time ascending
  std::vector<double> peak;                        ///< per rank
  std::vector<double> peak_time;                   ///< when the peak is first reached
  bool in_bytes = false;
  double max_peak() const;
};

MemoryProfile compute_memory(const Schedule& s, const Timeline& t, const MemoryModel& model);

/// The highest per-rank peak with each rank's memory events taken in program order, without a
/// timeline. A rank runs its compute in order, so this is compute_memory's order too, except where
/// a free and an allocation fall at the same instant (a zero-cost action): compute_memory then
/// applies the free first, so its peak can only be lower. Hence always an upper bound, and exact
/// when every action that allocates or frees lasts a positive time. A search uses it to rule out a
/// candidate over a memory cap before simulating it.
double sequential_peak(const Schedule& s, const MemoryModel& model);

}  // namespace ppsched
