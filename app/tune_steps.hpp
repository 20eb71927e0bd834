// The steps of `ppsched tune` between its flags (cmd_tune.cpp) and the engine (lib/tune): what
// the inputs let it try, the layout search of --gpus (tune/layouts.hpp), and the files of
// --emit-best.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/tune_report.hpp"
#include "schedule_source.hpp"
#include "sim_inputs.hpp"
#include "tune/tune.hpp"

namespace ppsched::cli {

/// What `ppsched tune` is asked, as its flags give it.
struct TuneOptions {
  std::uint32_t gpus = 0;  ///< --gpus: search the whole layout over this many GPUs
  std::uint32_t gpus_per_node = 8;
  TuneRequest request;
  SimInputOptions inputs;
  std::string format = "text";
  std::string output = "-";
  std::string html;  ///< --html: the candidates' page
  std::string emit_best;
  std::vector<std::string> frameworks;  ///< --framework: what --emit-best writes for (tune_emit.hpp)
  std::string torchtitan_config;        ///< --torchtitan-config MODULE:FUNCTION
  std::size_t top = 10;
  double max_schedule_gib = 4;
  MemoryModelOptions memory_model;  // pytorch-liveness: --memory-cap counts slots
  KeywordOptions keywords;          // PyTorch's runtime lowering, under --runtime pytorch
};

/// What the inputs allow the engine to try (a model's blocks, a fixed partition, a table's stage
/// count), with what it leaves out added to the notes. False: a problem was printed.
bool limit_shapes(TuneOptions& opt, TuneSources& sources);

/// `tune --gpus N`: the layout search and its report. Returns the exit code.
int run_tune_gpus(TuneOptions& opt, const TuneSources& sources);

}  // namespace ppsched::cli
