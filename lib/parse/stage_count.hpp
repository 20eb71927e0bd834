// How many stages an input file describes, for `tune`: a cost table or a stage spec prices one
// pipeline shape, so tune tries only the shapes with that many stages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "diag/diagnostic.hpp"

namespace ppsched {

/// One more than the highest stage a cost table (CSV or JSON) has a row for; problems in the
/// table go to `sink` and give nullopt.
std::optional<std::uint32_t> cost_table_stage_count(const std::string& path, DiagnosticSink& sink);

/// The number of stage objects a stage spec lists; nullopt (nothing reported) when the file cannot
/// be read as one: the reader then reports why, with the place.
std::optional<std::uint32_t> stage_spec_stage_count(const std::string& path);

}  // namespace ppsched
