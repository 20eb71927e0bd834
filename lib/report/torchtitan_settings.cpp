#include "report/torchtitan_settings.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <variant>

#include "io/log_text.hpp"
#include "ir/user_error.hpp"
#include "report/python_text.hpp"
#include "report/shell_text.hpp"

namespace ppsched {

namespace {

// One setting of Trainer.Config by its dotted path: the overrides and the registry both write
// this list, so the two faces cannot disagree.
struct Field {
  std::string path;
  std::variant<std::uint64_t, std::string, bool> value;
};

std::uint64_t pp_microbatches(const RunSettings& s) { return s.pp > 1 ? s.microbatches : 1; }

// A path that starts with '-' would read as an option on the command line; "./" keeps the file.
std::string csv_argument(const std::string& path) { return path.starts_with("-") ? "./" + path : path; }

std::vector<Field> fields(const RunSettings& s) {
  std::vector<Field> f;
  f.push_back({"parallelism.pipeline_parallel_degree", std::uint64_t{s.pp}});
  if (s.pp > 1) {
    f.push_back({"parallelism.pipeline_parallel_schedule", torchtitan_schedule_class(s)});
    f.push_back({"parallelism.pipeline_parallel_schedule_csv", csv_argument(s.schedule_csv)});
    f.push_back({"parallelism.num_pp_microbatches", std::uint64_t{s.microbatches}});
  }
  f.push_back({"parallelism.tensor_parallel_degree", std::uint64_t{s.tp}});
  // Sequence parallel is on by default: said either way, since a base config may have turned it off.
  if (s.tp > 1) f.push_back({"parallelism.enable_sequence_parallel", s.sequence_parallel});
  // FSDP2 is ZeRO-3: a sharded run puts every replica in the shard dimension, a plain one in the
  // replicate dimension (DDP). ZeRO-1 and -2 are refused before this.
  const bool fsdp = effective_sharding(s) == DataSharding::Full;
  f.push_back({"parallelism.data_parallel_shard_degree", std::uint64_t{fsdp ? s.dp : 1}});
  f.push_back({"parallelism.data_parallel_replicate_degree", std::uint64_t{fsdp ? 1 : s.dp}});
  if (fsdp)
    f.push_back({"parallelism.fsdp_reshard_after_forward", std::string(s.reshard_after_forward ? "always" : "never")});
  if (s.experts > 0) f.push_back({"parallelism.expert_parallel_degree", std::uint64_t{s.ep}});
  // A token count per model forward, that is per pipeline microbatch, and per step over every replica.
  f.push_back({"training.num_tokens_per_microbatch_per_dp_rank", std::uint64_t{s.microbatch_size} * s.sequence_length});
  f.push_back({"training.num_tokens_per_train_step", s.global_batch * s.sequence_length});
  f.push_back({"training.max_context_length", s.sequence_length});
  // Trainer.Config refuses CUDA graphs (on by default) under pipeline parallelism.
  if (s.pp > 1) f.push_back({"training.disable_cuda_graphs", true});
  return f;
}

std::string_view ac_subcommand(RecomputeSetting r) {
  switch (r) {
    case RecomputeSetting::Selective:
      return "selective";
    case RecomputeSetting::Full:
      return "full";
    default:
      return "none";
  }
}

void check_runnable(const RunSettings& s) {
  const std::vector<std::string> why = torchtitan_refusals(s);
  if (!why.empty())
    throw UserError(fmt::format("torchtitan ({}) cannot run these settings: {}", kTorchtitanCommit.substr(0, 8),
                                fmt::join(why, "; ")));
}

void check_name(std::string_view name, bool dotted, std::string_view what) {
  if (dotted ? !is_python_module_name(name) : !is_python_identifier(name))
    throw UserError(fmt::format("{} '{}' is not a Python {}", what, printable(name),
                                dotted ? "module name (identifiers joined by dots)" : "identifier"));
}

}  // namespace

std::vector<std::string> torchtitan_refusals(const RunSettings& s) {
  std::vector<std::string> why;
  if (s.pp == 0 || s.tp == 0 || s.dp == 0 || s.stages_per_rank == 0 || s.ep == 0)
    why.push_back("a parallel degree or the stages per rank is 0");
  if (std::uint64_t{s.pp} * s.tp * s.dp != s.gpus)
    why.push_back(fmt::format("pp x tp x dp = {} x {} x {} is not the run's {} GPUs", s.pp, s.tp, s.dp, s.gpus));
  const DataSharding sharding = effective_sharding(s);
  if (sharding == DataSharding::Optimizer || sharding == DataSharding::Gradients)
    why.push_back(fmt::format(
        "torchtitan shards data-parallel state with FSDP2 (ZeRO-3: parameters, gradients and optimizer state) or "
        "not at all; ZeRO-{} sharding has no setting there: tune with full sharding or none",
        sharding == DataSharding::Optimizer ? 1 : 2));
  if (s.pp > 1 && s.schedule_csv.empty())
    why.push_back("the chosen order reaches torchtitan only as a schedule CSV, and there is none");
  if (s.pp == 1 && s.stages_per_rank > 1)
    why.push_back(fmt::format("torchtitan turns pipelining off at degree 1, so {} stages on one rank are one",
                              s.stages_per_rank));
  if (s.v_placement && s.stages_per_rank != 2)
    why.push_back(fmt::format("torchtitan places a V with 2 stages per rank, not {}", s.stages_per_rank));
  if (s.stage_layers.empty() && s.pp > 1 && s.stages_per_rank > 2)
    why.push_back(
        fmt::format("without the layers of each stage torchtitan splits the model into 1 or 2 stages "
                    "per rank, not {}: tune with a model file",
                    s.stages_per_rank));
  for (const std::string& p : stage_layers_problems(s)) why.push_back(p);
  if (s.experts == 0 && s.ep > 1) why.push_back("expert parallel in a model without experts");
  const std::uint64_t shard = effective_sharding(s) == DataSharding::Full ? s.dp : 1;
  if (s.experts > 0 && s.ep > 0 && (shard * s.tp) % s.ep != 0)
    why.push_back(
        fmt::format("torchtitan's expert parallel takes its ranks from FSDP x TP = {}, which ep {} does "
                    "not divide",
                    shard * s.tp, s.ep));
  if (s.microbatch_size == 0 || s.sequence_length == 0 || s.global_batch == 0 || (s.pp > 1 && s.microbatches == 0))
    why.push_back("a batch, microbatch or sequence of size 0");
  const std::uint64_t tokens = std::uint64_t{s.microbatch_size} * s.sequence_length;
  if (s.tp > 1 && s.sequence_parallel && tokens % s.tp != 0)
    why.push_back(fmt::format("{} tokens per microbatch do not split over sequence parallel {}", tokens, s.tp));
  const std::uint64_t per_pass = std::uint64_t{s.microbatch_size} * pp_microbatches(s) * s.dp;
  if (per_pass > 0 && s.global_batch % per_pass != 0)
    why.push_back(fmt::format("the global batch {} is not a multiple of microbatch size x microbatches x dp = {}",
                              s.global_batch, per_pass));
  return why;
}

std::string torchtitan_schedule_class(const RunSettings& s) {
  if (s.v_placement) return "ZBVZeroBubble";
  return s.stages_per_rank == 1 ? "PipelineScheduleSingle" : "PipelineScheduleMulti";
}

std::vector<std::vector<std::string>> torchtitan_stage_modules(const RunSettings& s) {
  std::vector<std::vector<std::string>> out;
  std::uint64_t block = 0;
  for (const std::string& stage : s.stage_layers) {
    auto& names = out.emplace_back();
    for (char c : stage) {
      if (c == 'E')
        names.push_back("tok_embeddings");
      else if (c == 'L')
        names.push_back("norm"), names.push_back("lm_head");
      else
        names.push_back("layers." + std::to_string(block++));
    }
  }
  return out;
}

std::vector<std::string> torchtitan_overrides(const RunSettings& s) {
  check_runnable(s);
  // module_fqns_per_model_part is left to the registry: how tyro spells a list[list[str]] on the
  // command line is not verified.
  std::vector<std::string> args;
  for (const Field& f : fields(s)) {
    if (const bool* on = std::get_if<bool>(&f.value)) {
      const std::size_t dot = f.path.rfind('.');  // a false bool is --<section>.no_<field>
      args.push_back(*on ? "--" + f.path : "--" + f.path.substr(0, dot + 1) + "no_" + f.path.substr(dot + 1));
      continue;
    }
    args.push_back("--" + f.path);
    if (const std::uint64_t* n = std::get_if<std::uint64_t>(&f.value))
      args.push_back(std::to_string(*n));
    else
      args.push_back(std::get<std::string>(f.value));
  }
  // A tyro subcommand: its token comes after every option of the config it is part of.
  args.push_back("activation-checkpoint:" + std::string(ac_subcommand(s.recompute)));
  return args;
}

std::string torchtitan_config_registry(const RunSettings& s, std::string_view base_module,
                                       std::string_view base_function) {
  check_runnable(s);
  check_name(base_module, true, "the base config module");
  check_name(base_function, false, "the base config function");
  // The first two lines are ppsched's own: Python reads an encoding declaration from a comment
  // there, which a user's comment must not be able to make.
  std::string out = fmt::format(
      "# Written by ppsched tune --emit-best: a torchtitan config_registry module (torchtitan {}).\n"
      "# Run it with --module <this module> --config {}, its folder on PYTHONPATH.\n",
      kTorchtitanCommit.substr(0, 8), kTorchtitanConfigFunction);
  for (const std::string& c : s.comments) out += python_comment(c);
  if (!s.model_name.empty()) out += python_comment("model: " + s.model_name);
  const std::string_view ac_class = s.recompute == RecomputeSetting::Full        ? "FullAC"
                                    : s.recompute == RecomputeSetting::Selective ? "SelectiveAC"
                                                                                 : "";
  out += "\n";
  if (!ac_class.empty()) out += fmt::format("from torchtitan.distributed.activation_checkpoint import {}\n", ac_class);
  out += "from torchtitan.trainer import Trainer\n\n";
  out += fmt::format("from {} import {} as _base_config\n\n\n", base_module, base_function);
  out += fmt::format("def {}() -> Trainer.Config:\n    config = _base_config()\n", kTorchtitanConfigFunction);
  for (const Field& f : fields(s)) {
    out += "    config." + f.path + " = ";
    if (const bool* on = std::get_if<bool>(&f.value))
      out += *on ? "True" : "False";
    else if (const std::uint64_t* n = std::get_if<std::uint64_t>(&f.value))
      out += std::to_string(*n);
    else
      out += python_string(std::get<std::string>(f.value));
    out += "\n";
  }
  // Without a pipeline torchtitan builds the whole model and reads no module lists.
  if (const auto stages = torchtitan_stage_modules(s); s.pp > 1 && !stages.empty()) {
    out +=
        "    # The modules of each stage, in stage order: set here and not on the command line, whose\n"
        "    # spelling of a nested list is not verified; no layers per stage, which torchtitan would\n"
        "    # check against the schedule class.\n"
        "    config.parallelism.pipeline_parallel_layers_per_stage = None\n"
        "    config.parallelism.module_fqns_per_model_part = [\n";
    for (const auto& stage : stages) {
      out += "        [";
      for (std::size_t i = 0; i < stage.size(); ++i) out += (i ? ", " : "") + python_string(stage[i]);
      out += "],\n";
    }
    out += "    ]\n";
  }
  out += ac_class.empty() ? "    config.activation_checkpoint = None\n"
                          : fmt::format("    config.activation_checkpoint = {}.Config()\n", ac_class);
  return out + "    return config\n";
}

std::string torchtitan_script(const RunSettings& s, std::string_view registry_dir, std::string_view registry_module) {
  const std::vector<std::string> args = torchtitan_overrides(s);
  check_name(registry_module, true, "the registry module");
  std::string out = fmt::format(
      "#!/bin/sh\n"
      "# Written by ppsched tune --emit-best: a torchtitan run (torchtitan {}), from its checkout.\n"
      "# run_train.sh starts NGPU processes on this machine (torchrun --nproc_per_node); on several\n"
      "# machines, give torchrun -m torchtitan.train the same --module, --config and arguments.\n",
      kTorchtitanCommit.substr(0, 8));
  for (const std::string& c : s.comments) out += shell_comment(c);
  if (!s.model_name.empty()) out += shell_comment("model: " + s.model_name);
  // The registry's folder goes before whatever PYTHONPATH already holds.
  if (!registry_dir.empty()) out += shell_assignment("PYTHONPATH", registry_dir) + "${PYTHONPATH:+:$PYTHONPATH} ";
  out += shell_assignment("NGPU", std::to_string(s.gpus)) + " " + shell_assignment("MODULE", registry_module) + " " +
         shell_assignment("CONFIG", kTorchtitanConfigFunction) + " ";
  std::vector<std::string> command = {"./run_train.sh"};
  command.insert(command.end(), args.begin(), args.end());
  return out + shell_command(command) + "\n";
}

}  // namespace ppsched
