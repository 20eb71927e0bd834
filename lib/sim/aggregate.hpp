// The timed model's aggregate answers without a Timeline: makespan, per-rank busy and idle time,
// both bubble ratios, the bubble decomposition and each rank's peak memory, in one run whose
// memory is bounded by the pipeline's live window, not by the schedule's length.
//
// Why a second run of the same model: a Timeline costs 29 bytes per action, all of it fresh memory
// that page faults fill (dearly on a hypervisor), so for millions of actions writing the Timeline
// alone is a large share of the run before a dependency is checked (docs/bench.md, "The Timeline
// floor"). Most questions (`simulate --views summary`, tune's and auto's candidate ranking,
// validate's thresholds) need only aggregates. This run keeps per event only what a consumer
// still needs, in a ring indexed by microbatch that covers the microbatches some unfinished
// action still names (every dependency in the model is between actions of the same microbatch),
// and folds each finished action into the aggregates at once.
//
// Contract: the result equals analyze(s, simulate_timed(s, ...), memory) field for field,
// bit for bit (same_aggregates), except that memory.per_rank (the step function) is left empty.
// The ring run handles schedules whose every action sits on its stage's rank and whose events
// are each raised once (as validate requires); anything else (a duplicated action, a stage on a
// rank that does not exist, a microbatch grid too sparse to count) takes the Timeline path, so
// the contract holds for any input. A schedule that cannot finish throws TimedDeadlock, exactly
// as simulate_timed does (it is run again, with a Timeline, to name the stuck actions).
//
// When the ring run's verdict can be trusted: with every action on its stage's rank, the
// consumers of an event and the partner of a SEND or RECV are found by placement alone, so a
// ring run that stops short stops where simulate_timed would, unless an action is duplicated (a
// second SEND whose RECV has paired already: simulate_timed pairs them again, the ring run waits
// for a RECV that never comes). The conformance test checks that on the corpus.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/schedule.hpp"
#include "sim/analysis.hpp"
#include "sim/leaf_census.hpp"
#include "sim/memory.hpp"
#include "sim/timed.hpp"

namespace ppsched {

/// How a run went, for tests and benchmarks: whether it fell back to the Timeline path, and the
/// largest ring of event slots it used, in microbatches (a power of two).
struct AggregateStats {
  bool fell_back = false;    ///< the Timeline path gave the result
  bool stuck = false;        ///< the ring run could not finish
  bool two_threads = false;  ///< two threads gave the result, each running half of the ranks
  bool census = false;       ///< a census stood in for the run's pass over the actions
  std::uint32_t window = 0;  ///< the larger half's, with two threads
};

/// `census`, when given, is what a pass before this one found over every leaf of `s`
/// (leaf_census.hpp): the run then skips its own pass over the actions. One that does not match
/// the placement is ignored.
SimAnalysis simulate_aggregates(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                const TimedOptions& opt, const MemoryModel& memory, AggregateStats* stats = nullptr,
                                const LeafCensus* census = nullptr);

/// simulate_aggregates with the ranks split between two threads at rank `mid` (the second
/// thread runs ranks mid.. ), whatever the schedule's size or the machine's cores: for tests. A
/// schedule the split run does not take (see above) or `mid` outside 1..ranks-1 runs on one thread.
SimAnalysis simulate_aggregates_split(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                      const TimedOptions& opt, const MemoryModel& memory, std::size_t mid,
                                      AggregateStats* stats = nullptr, const LeafCensus* census = nullptr);

/// The same, for searches that try many candidates: a schedule that cannot finish gives nullopt,
/// without the second run that would name its stuck actions. For a schedule with a duplicated
/// action, nullopt may also mean that the ring run stopped short (see above); searches that
/// reorder a valid schedule never make one.
std::optional<SimAnalysis> try_simulate_aggregates(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                                   const TimedOptions& opt, const MemoryModel& memory,
                                                   AggregateStats* stats = nullptr);

}  // namespace ppsched
