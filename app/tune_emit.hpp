// `ppsched tune --emit-best DIR`: the settings a user pastes into a framework, for the best
// candidate each framework can run. Per --framework:
//   torchtitan          DIR/schedule.csv, DIR/ppsched_torchtitan_config.py (a config_registry
//                       function) and DIR/run_torchtitan.sh (its command-line overrides), for
//                       torchtitan at report/torchtitan_settings.hpp's pinned commit
//   torchtitan@0.2.2    DIR/schedule.csv and DIR/torchtitan.toml, the TOML of torchtitan's older
//                       config system (the pipeline alone: tune --ranks)
//   megatron            DIR/run_megatron.sh, Megatron-LM's arguments (report/megatron_args.hpp)
// Every file of a call is written together: after the command all are new or all are old.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tune/layouts.hpp"
#include "tune_steps.hpp"

namespace ppsched::cli {

/// One ranked candidate: its layout over `gpus` GPUs and its pipeline's trial, tuned by `request`
/// (its ranks are the layout's pipeline ranks).
struct EmitCandidate {
  ParallelLayout layout;
  std::uint32_t gpus = 0;
  const TuneTrial* trial = nullptr;
  TuneRequest request;
  bool fits = false;
};

/// The frameworks --framework names (default: torchtitan and megatron with a model file, the
/// older TOML without one); empty after printing why when the list is bad.
std::vector<std::string> emit_frameworks(const TuneOptions& opt);

/// Writes DIR's files for `ranked` (best first) and prints which candidate each framework got.
/// False: a problem was printed, and nothing was written.
bool emit_settings(const TuneOptions& opt, const TuneSources& sources, const std::vector<EmitCandidate>& ranked);

}  // namespace ppsched::cli
