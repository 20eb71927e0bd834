// A tuned run (report/run_settings.hpp) in today's torchtitan, pinned at commit b5bcd76c
// (2026-08-21), where a run is a config_registry function plus frozen `--section.field`
// overrides parsed by tyro (the TOML configs are gone; report/torchtitan_toml.hpp writes those
// for torchtitan 0.2.2 and older). Three faces of the same settings:
//
//   torchtitan_overrides        --parallelism.pipeline_parallel_degree 8 ... activation-checkpoint:full
//   torchtitan_config_registry  a Python module: ppsched_best() calls the model's registry function
//                               and sets the same fields, plus module_fqns_per_model_part
//   torchtitan_script           a sh script: NGPU=64 MODULE=<that module> CONFIG=ppsched_best
//                               ./run_train.sh <overrides>
//
// What torchtitan cannot run is refused, never approximated: torchtitan_refusals says why, and
// the three faces throw UserError with those reasons.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/run_settings.hpp"

namespace ppsched {

/// The torchtitan commit whose option names, defaults and rules these faces follow.
inline constexpr std::string_view kTorchtitanCommit = "b5bcd76c66d0acb1a08b176d9639425bc55e0b2a";
/// The function torchtitan_config_registry defines: the value of --config.
inline constexpr std::string_view kTorchtitanConfigFunction = "ppsched_best";

/// Why torchtitan at kTorchtitanCommit cannot run `s`, one sentence each; empty when it can.
/// Refused: ZeRO-1 and ZeRO-2 over more than one replica (torchtitan shards with FSDP2, which is
/// ZeRO-3, or replicates), a pipeline without a schedule CSV (the order ppsched chose exists only
/// there), a V with other than two stages per rank, more than two stages per rank with no layers
/// per stage (torchtitan's own split makes one or two), unfit stage layers, an expert-parallel
/// degree that does not divide FSDP x TP, and batch sizes torchtitan's checks reject.
std::vector<std::string> torchtitan_refusals(const RunSettings& s);

/// The value of --parallelism.pipeline_parallel_schedule. With a CSV torchtitan runs the file
/// through PyTorch's _PipelineScheduleRuntime whatever the name, and takes from the named class
/// only the stage placement: ZBVZeroBubble for a V (two stages per rank; torchtitan's metrics
/// also look for this name to read the loss on rank 0, where a V ends), else
/// PipelineScheduleSingle (one per rank) or PipelineScheduleMulti (looped). A V named
/// PipelineScheduleMulti would run its CSV on looped stages.
std::string torchtitan_schedule_class(const RunSettings& s);

/// torchtitan's module names per stage, from s.stage_layers: E is tok_embeddings, each t the next
/// of layers.0, layers.1, ..., and L is norm and lm_head. Empty without stage layers.
std::vector<std::vector<std::string>> torchtitan_stage_modules(const RunSettings& s);

/// The command-line overrides, one argument per element, options before the activation-
/// checkpoint subcommand token that ends them. The modules per stage are not among them (see
/// torchtitan_config_registry). Throws UserError when torchtitan_refusals(s) is not empty.
std::vector<std::string> torchtitan_overrides(const RunSettings& s);

/// A Python module defining kTorchtitanConfigFunction(): it calls `base_function` of
/// `base_module` (e.g. llama3_70b of torchtitan.models.llama3.config_registry) and sets every
/// field of the overrides on the Trainer.Config that returns, plus module_fqns_per_model_part.
/// Throws UserError when torchtitan_refusals(s) is not empty or a name is not a Python name.
std::string torchtitan_config_registry(const RunSettings& s, std::string_view base_module,
                                       std::string_view base_function);

/// A sh script for torchtitan's checkout: the comments, then one command line that runs
/// run_train.sh with NGPU, MODULE=`registry_module` (the module torchtitan_config_registry wrote,
/// found through PYTHONPATH=`registry_dir` when that is not empty), CONFIG and the overrides.
/// Throws UserError as torchtitan_overrides does, or when `registry_module` is not a Python name.
std::string torchtitan_script(const RunSettings& s, std::string_view registry_dir, std::string_view registry_module);

}  // namespace ppsched
