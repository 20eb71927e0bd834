// The torchtitan settings that run a schedule `ppsched tune` chose, as a TOML snippet for a job
// config (docs/conventions: torchtitan reads the CSV through _PipelineScheduleRuntime, takes the
// stages per rank and their placement from the schedule class it is given, and the modules of
// each stage from module_fqns_per_model_part).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/network.hpp"
#include "model/partition.hpp"
#include "report/tune_report.hpp"
#include "tune/tune.hpp"

namespace ppsched {

struct TorchtitanSettings {
  std::uint32_t pp_degree = 0;
  std::string schedule_class;  ///< the class torchtitan builds the stages with (its placement)
  std::string csv_path;        ///< the schedule CSV; empty: the class runs its own order
  std::uint32_t microbatch_size = 1;
  std::uint32_t local_batch_size = 0;  ///< microbatches x microbatch size
  /// Per stage, the modules it holds (torchtitan's names); empty: not known (no model file).
  std::vector<std::vector<std::string>> module_fqns;
  std::vector<std::string> comments;  ///< lines at the top (what was chosen and why)
};

/// torchtitan's module names of each stage of a partition: tok_embeddings, layers.<i> (blocks
/// counted from 0), and norm and output for the head.
std::vector<std::vector<std::string>> torchtitan_module_fqns(const NetworkModel& model, const Partition& partition);

/// The snippet: comments, then [parallelism] and [training] tables.
std::string torchtitan_toml(const TorchtitanSettings& settings);

/// The settings that run `best`, the pick of a tune of `request` whose schedule CSV is at
/// `csv_path` (V-placed when `v_placement`): the class of its placement, the microbatch and local
/// batch sizes, and comments on what was chosen under which time model (`sources`). The modules
/// per stage are the caller's to fill in from the model's partition; without a model
/// (`sources.model` empty) a comment says torchtitan splits the layers itself.
TorchtitanSettings tune_best_settings(const TuneRequest& request, const TuneSources& sources, const TuneTrial& best,
                                      bool v_placement, const std::string& csv_path);

/// The class whose stage placement matches a schedule of `stages_per_rank` stages per rank in
/// loop or V placement: 1F1B (one per rank), Interleaved1F1B (loop), ZBVZeroBubble (V).
std::string torchtitan_class_for(std::uint32_t stages_per_rank, bool v_placement);

}  // namespace ppsched
