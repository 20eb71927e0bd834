// What a pass over every leaf of a schedule found, in the form the aggregate simulator's own first
// pass (its scan: sizes, placement, how many leaves name each microbatch) would find it again.
//
// Why: on a 6M-action schedule each pass over the actions costs about a tenth of the time it takes
// to read the file, and validate and simulate read every action before they simulate: validate's
// structure proof (check/structure_proof.cpp) already knows which kinds each (stage, microbatch)
// has and the one rank each stage runs on. Handing that over saves the simulator its scan (issue 48).
#pragma once

#include <cstdint>
#include <vector>

namespace ppsched {

/// A complete census: every leaf that names a microbatch also names a stage below `stages`, is
/// one of the eight kinds below, at most once per (stage, microbatch), and runs on its stage's
/// rank in `stage_rank`. A producer that cannot say all of that gives none.
struct LeafCensus {
  /// The kinds as bits of `kinds`: one each.
  static constexpr std::uint8_t kF = 1, kB = 2, kI = 4, kW = 8, kSendF = 16, kRecvF = 32, kSendB = 64, kRecvB = 128;
  std::uint32_t stages = 0, microbatches = 0;  ///< the grid's size
  std::vector<std::uint8_t> kinds;             ///< per (stage, microbatch), stage-major: the kinds present
  std::vector<std::uint32_t> stage_rank;       ///< per stage (< stages): the rank all its leaves run on
  bool any_stage = false;                      ///< some leaf names a stage
  std::uint32_t max_stage = 0;                 ///< the highest stage a leaf names, without a microbatch too
  bool explicit_comms = false;                 ///< some action is a SEND or RECV
  bool containers = false;                     ///< some action is a container
};

}  // namespace ppsched
