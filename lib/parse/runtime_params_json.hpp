// The runtime parameters file (JSON, docs/formats.md section 11): the calibrated figures of a
// runtime model, read for `--runtime-params` to replace the ones ppsched ships
// (model/runtime_params.hpp). Only `--runtime megatron` has parameters today; the file names its
// runtime so that figures for one runtime are never read as another's. Not the model itself: what
// the figures mean and how they are used is in docs/manual.md, "Runtime models".
//
// Every problem is reported with file:line:col of the value and its JSON path
// ("$.p2p_call_overhead_us"), rule id runtime-params-file.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "diag/diagnostic.hpp"
#include "model/runtime_params.hpp"

namespace ppsched {

/// Reads a runtime parameters file ("-" for standard input). Problems go to `sink`; nullopt on any.
std::optional<RuntimeParams> read_runtime_params(const std::string& path, DiagnosticSink& sink);

/// The same on text in memory, reported as file `name` (the fuzz targets use it).
std::optional<RuntimeParams> read_runtime_params_text(std::string_view name, std::string_view text,
                                                      DiagnosticSink& sink);

}  // namespace ppsched
