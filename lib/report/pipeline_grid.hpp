// PyTorch's step-by-rank grid (`_format_pipeline_order`): one row per step, one column per
// rank, idle steps blank. Used by `compile --format text` and by error reports.
//
//            Rank 0  Rank 1
//   Step 0: 0F0     1F0
//   Step 1: 0F1     1B0
//
// Quirks kept for byte equality: a column is as wide as its widest action or as the step
// label ("Step 00"), never as its "Rank i" header, and rows keep their trailing spaces.
// Where PyTorch raises (no steps: empty output; more ranks than steps: the extra columns are as
// wide as their header) this prints a sensible grid instead.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "io/byte_sink.hpp"
#include "ir/schedule.hpp"

namespace ppsched {

/// Writes the grid to `sink` as it is formatted (a long dry run's grid is never whole in memory).
void write_pipeline_grid(const Schedule& s, ByteSink& sink, std::optional<std::size_t> error_step = {});
/// The grid as one string (small schedules, error reports).
std::string format_pipeline_grid(const Schedule& s, std::optional<std::size_t> error_step = {});

}  // namespace ppsched
