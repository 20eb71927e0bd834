// The building blocks of "Pipeline Parallelism with Controllable Memory" (Qi et al., arXiv
// 2405.15362) and the framework that turns one into a V schedule: ppsched's own code for what the
// paper describes (repeat the block, squeeze it, reorder its warm-up and cool-down, fill its
// holes), all in unit slots. The automatic search runs it over every block that fits a cap
// (auto/v_blocks.hpp); the VHalfReordered and VMinReordered families over V-Half's and
// V-Min's blocks.
//
// A building block gives every rank one slot in a period of six for each of its six actions of a
// microbatch: the forward, input gradient and weight gradient of each of its two chunks (chunk 0
// is rank r's stage r, chunk 1 its stage 2p-1-r, whose backward comes first). Rank 0's slots are a
// first-row pattern; each next rank's come from the rank before by fixed offsets (its chunk-0
// forward and chunk-1 input gradient some slots later, the other two one slot earlier). Memory is
// counted as the framework counts it, in chunk activations (a forward holds one until its W).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/action.hpp"

namespace ppsched::vblock {

constexpr int kPeriod = 6;
/// A rank's six actions of a microbatch, as indices: each chunk's forward, input gradient and W.
enum Kind : std::int8_t { kF0 = 0, kF1, kI1, kI0, kW1, kW0 };
/// Kind -> slot in the period.
using Row = std::array<int, kPeriod>;
/// Kind -> where a rank's first microbatch of it sits in the repeated block.
using Firsts = std::array<int, kPeriod>;

/// Puts the weight gradients in the first free slots after their input gradients (the second
/// chunk's first), so that a rank's six slots are all used. False when there is no room.
bool fill_weight_grads(Row& row);
/// The next rank's row: its chunk-0 forward and chunk-1 input gradient `shift` slots later, the
/// other two one slot earlier. False when two land on one slot.
bool next_row(const Row& row, int shift, Row& next);
/// Where each rank's first microbatch of each kind sits: microbatch 0's chain in order, each at the
/// first slot of its kind after the one it follows.
std::vector<Firsts> first_positions(const std::vector<Row>& rows);
/// The most chunk activations some rank holds in the steady state of the block repeated `repeats`
/// times: never more than the repeated block's peak.
int steady_level(const std::vector<Firsts>& first, std::uint32_t repeats);

/// How many times the framework repeats a block before dropping the extra microbatches: at least
/// 2p, so that the warm-up has enough to reorder.
std::uint32_t repeats(std::uint32_t ranks, std::uint32_t microbatches);
/// What the repeated block may hold before the framework rules it out: `chunks` when no microbatch
/// is dropped later, else 2p (dropping them lowers the peak).
int most_held(std::uint32_t ranks, std::uint32_t microbatches, std::uint32_t chunks);

/// The framework over one block, for `microbatches` microbatches within `chunks` chunk activations
/// per rank (at most 2p): each rank's program, or nullopt when the block does not fit or a step
/// cannot keep it valid. Adds to `work` the slots it passed over (each cell of a grid pass once).
std::optional<std::vector<std::vector<Action>>> reorder(const std::vector<Firsts>& first, std::uint32_t microbatches,
                                                        std::uint32_t chunks, double& work);

}  // namespace ppsched::vblock
