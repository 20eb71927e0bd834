// The model file (JSON, docs/formats.md section 10): a transformer described once (shape,
// precision, recompute policy, layers, optionally measured times), from which model/ derives the
// per-stage costs and memory for any stage count and microbatch size. The NetworkModel it gives
// is plain data (model/network.hpp).
//
// Every problem is reported with file:line:col of the value and its JSON path ("$.layers[2].type"),
// rule id model-file. Unknown keys are errors, with the nearest known key suggested.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "diag/diagnostic.hpp"
#include "model/network.hpp"

namespace ppsched {

/// Reads a model file ("-" for standard input). Problems go to `sink`; nullopt on any. A model
/// it returns passes check_network.
std::optional<NetworkModel> read_model(const std::string& path, DiagnosticSink& sink);

/// The same on text in memory, reported as file `name` (the tests and fuzz targets use it).
std::optional<NetworkModel> read_model_text(std::string_view name, std::string_view text, DiagnosticSink& sink);

}  // namespace ppsched
