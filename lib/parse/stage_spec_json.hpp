// The stage spec file (JSON, docs/formats.md): per stage, the bytes sent across its boundaries,
// the memory it holds per microbatch, its weights and its inputs. Read for `--stage-spec`; the
// StageSpec rows it gives are plain data (model/comm.hpp).
//
// Every problem is reported with file:line:col of the value and its JSON path ("$.stages[2]"),
// rule id stage-spec.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diag/diagnostic.hpp"
#include "model/comm.hpp"

namespace ppsched {

/// Reads a stage spec JSON file ("-" for standard input) for a schedule of `num_stages` stages:
/// one object per stage. Problems go to `sink`; nullopt on any.
std::optional<std::vector<StageSpec>> read_stage_spec(const std::string& path, std::uint32_t num_stages,
                                                      DiagnosticSink& sink);

/// The same on text in memory, reported as file `name` (the fuzz targets use it).
std::optional<std::vector<StageSpec>> read_stage_spec_text(std::string_view name, std::string_view text,
                                                           std::uint32_t num_stages, DiagnosticSink& sink);

}  // namespace ppsched
