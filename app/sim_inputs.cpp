#include "sim_inputs.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli_support.hpp"
#include "diag/suggest.hpp"
#include "io/input_file.hpp"
#include "model/stage_model.hpp"
#include "parse/cost_table.hpp"
#include "parse/model_json.hpp"
#include "parse/runtime_params_json.hpp"
#include "parse/stage_spec_json.hpp"
#include "parse/topology_json.hpp"

namespace ppsched::cli {

void add_sim_input_options(CLI::App& sub, SimInputOptions& opt) {
  sub.add_option("--cost", opt.cost, "Per-rank costs, e.g. F=1,B=2,I=1,W=1 (default: F=I=W=1, B=I+W)");
  sub.add_option("--costs", opt.costs,
                 "Cost table: CSV stage,kind,time_us or JSON (overrides --cost); it must price every stage and "
                 "compute kind the schedule runs");
  sub.add_option("--fill", opt.fill,
                 "What the cost table leaves out costs: none (an error, the default) or unit (the --cost values, "
                 "unit costs by default, with a warning)")
      ->check(CLI::IsMember({"none", "unit"}))
      ->option_text("none|unit");
  sub.add_option("--overlap-factor", opt.overlap_factor, "OVERLAP_F_B lasts this times the sum of its parts")
      ->check(finite_in(0.0, 1.0));
  sub.add_option("--stage-spec", opt.stage_spec, "Stage spec JSON: bytes per stage boundary, memory, inputs");
  sub.add_option("--topology", opt.topology, "Topology JSON: ranks on nodes and slices, link latency and bandwidth");
  sub.add_flag("--blocking-comms", opt.blocking_comms,
               "Sends and receives block the compute stream in program order (synchronous send/recv); needs a "
               "schedule with SEND/RECV, which --runtime pytorch makes of a compute-only one");
}

void add_gpu_count_option(CLI::App& sub, SimInputOptions& opt) {
  sub.add_option("--gpu-count", opt.gpu_count,
                 "The ranks share this many GPUs, spread in contiguous blocks as `ppsched run` spreads them; ranks on "
                 "one GPU take turns on its compute, in the order their work became ready (default: a GPU per rank)")
      ->check(CLI::Range(1u, 1u << 20));
}

void add_send_mode_option(CLI::App& sub, std::string& send_mode) {
  sub.add_option("--send-mode", send_mode,
                 "How a SEND completes: rendezvous (default: only with its RECV, as NCCL does once a message exceeds "
                 "its buffer), eager (without its RECV), or eager:BYTES (eager for messages of at most BYTES bytes, "
                 "sizes from the stage spec; NCCL's buffer is 4194304 by default)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            if (parse_send_mode(text)) return {};
            std::string msg = "'" + text +
                              "' is not a send mode: write rendezvous, eager, or eager:BYTES with BYTES a "
                              "whole number of bytes (eager:4194304 is NCCL's default buffer, NCCL_BUFFSIZE)";
            static constexpr std::string_view kNames[] = {"rendezvous", "eager"};
            const std::string_view head = std::string_view(text).substr(0, text.find(':'));
            if (auto near = closest_match(head, kNames); near && *near != head)
              msg += "; did you mean '" + *near + "'?";
            return msg;
          },
          "rendezvous|eager[:BYTES]", "send mode"))
      ->option_text("rendezvous|eager[:BYTES]");
}

void add_p2p_queues_option(CLI::App& sub, std::string& p2p_queues, bool measured) {
  // `measured` (trace): one more value, the default, read off the trace's NCCL streams.
  std::vector<std::string> names = {"per-rank", "per-direction", "per-pair", "per-edge"};
  if (measured) names.insert(names.begin(), "measured");
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : "|") + n;
  sub.add_option("--p2p-queues", p2p_queues,
                 std::string("Which sends and receives of a rank share one in-order queue, as the ops of one NCCL "
                             "communicator do: ") +
                     (measured ? "measured (default: as the trace's NCCL kernel streams show, per-rank when they "
                                 "cannot tell), per-rank (all of them, PyTorch's one communicator per rank)"
                               : "per-rank (default: all of them, PyTorch's one communicator per rank)") +
                     ", per-direction (activations and gradients apart), per-pair (one per rank pair, both "
                     "directions: ProcessGroupNCCL's unbatched point-to-point) or per-edge (one per directed rank "
                     "pair)")
      ->check(CLI::IsMember(names))
      ->option_text(text);
}

bool send_mode_has_sizes(const SendMode& mode, bool has_sizes, const std::string& sizes_from) {
  if (!mode.needs_sizes() || has_sizes) return true;
  print_error(
      fmt::format("--send-mode {} makes a send eager when its message is at most {:.0f} bytes, and no message "
                  "has a size here: give {} (each stage's activation_bytes and gradient_bytes), or "
                  "--send-mode eager to make every send eager",
                  send_mode_name(mode), mode.eager_max_bytes, sizes_from));
  return false;
}

std::optional<LivenessGranularity> MemoryModelOptions::liveness() const {
  if (model != "pytorch-liveness") return std::nullopt;
  return liveness_granularity_from_name(granularity);  // the option's check has admitted only those names
}

void add_memory_model_options(CLI::App& sub, MemoryModelOptions& opt, const std::string& cap_flag) {
  sub.add_option("--memory-model", opt.model,
                 "bytes (default: ppsched's memory model, in time) or pytorch-liveness (PyTorch's activation slots "
                 "over each rank's order; " +
                     cap_flag + " then counts slots)")
      ->check(CLI::IsMember({"bytes", "pytorch-liveness"}))
      ->option_text("bytes|pytorch-liveness");
  std::vector<std::string> granularities;
  for (LivenessGranularity g : kLivenessGranularities) granularities.emplace_back(liveness_granularity_name(g));
  sub.add_option(
         "--liveness-granularity", opt.granularity,
         "pytorch-liveness: the granularity " + cap_flag + " limits (stage_microbatch, the default, or microbatch)")
      ->check(CLI::IsMember(granularities));
}

namespace {
std::vector<std::string> runtime_name_list() {
  std::vector<std::string> out;
  for (std::string_view n : runtime_names()) out.emplace_back(n);
  return out;
}
}  // namespace

void add_runtime_option(CLI::App& sub, SimInputOptions& opt) {
  sub.add_option("--runtime", opt.runtime,
                 "Whose execution the times describe: pytorch (default: what PyTorch's _PipelineScheduleRuntime runs, "
                 "a compute-only schedule lowered with its runtime recipe), ideal (the schedule as given, data moving "
                 "as soon as it is produced: a lower bound) or megatron (Megatron-LM's p2p calls, calibrated on A100; "
                 "costs in microseconds)")
      ->transform(CLI::IsMember(runtime_name_list(), CLI::ignore_case))
      ->option_text("pytorch|ideal|megatron");
  sub.add_option("--runtime-params", opt.runtime_params,
                 "With --runtime megatron: a file of its calibrated figures (docs/formats.md; default: the shipped "
                 "A100 figures, schedules/megatron-a100.runtime.json)");
  add_optimizer_option(sub, opt);
}

void add_optimizer_option(CLI::App& sub, SimInputOptions& opt) {
  sub.add_option("--optimizer", opt.optimizer,
                 "How iterations meet: sync (default: each ends in a synchronizing optimizer step; an iteration costs "
                 "the makespan) or post-validated (iterations overlap, as in the Zero Bubble runtime; one costs the "
                 "longest rank span). --schedule auto minimises that time")
      ->transform(CLI::IsMember({"sync", "post-validated"}, CLI::ignore_case))
      ->option_text("sync|post-validated");
}

std::optional<RuntimeModel> load_runtime_model(const SimInputOptions& opt) {
  RuntimeModel model;
  model.runtime = opt.runtime_model();
  model.optimizer = opt.optimizer_model();
  if (model.runtime != Runtime::Megatron) {
    if (!opt.runtime_params.empty()) {
      print_error("--runtime-params gives the figures of --runtime megatron; --runtime " + opt.runtime + " has none");
      return std::nullopt;
    }
    return model;
  }
  if (opt.send().eager()) {
    print_error(
        "--send-mode does not apply to --runtime megatron: Megatron's p2p calls are modelled with their "
        "calibrated overheads, not a send mode");
    return std::nullopt;
  }
  if (opt.queues() != P2pQueues::PerRank) {
    print_error(
        "--p2p-queues does not apply to --runtime megatron: Megatron's p2p calls are modelled with their "
        "calibrated overheads, not as communicator queues");
    return std::nullopt;
  }
  if (opt.blocking_comms) {
    print_error(
        "--blocking-comms does not apply to --runtime megatron: Megatron decides how its calls block "
        "(synchronous for a fused backward under --optimizer sync, asynchronous otherwise)");
    return std::nullopt;
  }
  if (opt.model.empty() && opt.cost.empty() && opt.costs.empty()) {
    print_error(
        "--runtime megatron adds overheads in microseconds: give costs in microseconds (--cost, --costs "
        "or --model), not the unit defaults");
    return std::nullopt;
  }
  if (!opt.runtime_params.empty()) {
    DiagnosticSink sink;
    std::optional<RuntimeParams> params = read_runtime_params(opt.runtime_params, sink);
    print_diagnostics(sink);
    if (!params) return std::nullopt;
    model.params = *params;
  }
  return model;
}

bool refuse_timed_only_flags(const SimInputOptions& opt) {
  if (opt.send().eager()) {
    print_error(
        "--send-mode applies to --simulator timed: --simulator pytorch-steps replays PyTorch's dry run as "
        "PyTorch runs it, where a SEND never waits for its RECV (every send eager)");
    return true;
  }
  if (opt.queues() != P2pQueues::PerRank) {
    print_error(
        "--p2p-queues applies to --simulator timed: --simulator pytorch-steps replays PyTorch's dry run, "
        "which has no communicator queues");
    return true;
  }
  if (opt.gpu_count > 0) {
    print_error("--gpu-count applies to --simulator timed: PyTorch's dry run has no devices");
    return true;
  }
  return false;
}

bool refuse_inert_comm_flags(const SimInputOptions& opt, const Schedule& as_run) {
  if (opt.blocking_comms && opt.queues() != P2pQueues::PerRank) {
    print_error(
        "--p2p-queues changes nothing with --blocking-comms: blocking sends and receives run on the compute "
        "stream, in program order");
    return true;
  }
  if (has_comms(as_run)) return false;
  if (opt.queues() != P2pQueues::PerRank) {
    print_error(
        "--p2p-queues changes nothing here: under --runtime ideal a compute-only schedule has no SEND or RECV "
        "to queue (its transfers are implicit); use --runtime pytorch, which lowers it as PyTorch does, or "
        "--lower send-recv");
    return true;
  }
  if (opt.blocking_comms) {
    print_error(
        "--blocking-comms changes nothing here: under --runtime ideal a compute-only schedule has no SEND or "
        "RECV to block on (its transfers are implicit); use --runtime pytorch, which lowers it as PyTorch "
        "does, or --lower send-recv");
    return true;
  }
  if (opt.send().eager()) {
    print_error(
        "--send-mode changes nothing here: under --runtime ideal a compute-only schedule has no SEND to "
        "complete early (its transfers are implicit); use --runtime pytorch, which lowers it as PyTorch does, "
        "or --lower send-recv");
    return true;
  }
  return false;
}

std::string time_model_description(const SimInputOptions& opt, const RuntimeModel& model) {
  std::string out(runtime_summary(model.runtime));
  if (model.runtime == Runtime::Megatron) {
    out += fmt::format("; {} us per p2p call", model.params.p2p_call_overhead_us);
    if (const GpuSpec* gpu = find_gpu(model.params.gpu); gpu && model.params.p2p_kernel_sms > 0)
      out += fmt::format(", {} of the {}'s {} SMs held by an asynchronous call in flight", model.params.p2p_kernel_sms,
                         gpu->name, gpu->sms);
    out += fmt::format(" ({}{})", opt.runtime_params.empty() ? "the shipped figures: " : opt.runtime_params + ": ",
                       model.params.hardware.empty() ? "hardware not stated" : model.params.hardware);
  }
  if (opt.blocking_comms) out += "; blocking sends and receives";
  if (opt.gpu_count > 0)
    out += fmt::format("; the ranks share {} GPU{}, each running one compute action at a time", opt.gpu_count,
                       opt.gpu_count == 1 ? "" : "s");
  if (const std::string eager = send_mode_summary(opt.send()); !eager.empty()) out += "; " + eager;
  if (const std::string queues = p2p_queues_summary(opt.queues()); !queues.empty()) out += "; " + queues;
  out += "; optimizer ";
  out += optimizer_summary(model.optimizer);
  return out;
}

void add_model_options(CLI::App& sub, SimInputOptions& opt, bool with_microbatch_size) {
  sub.add_option("--model", opt.model,
                 "Model file (JSON, docs/formats.md): layers with measured times or shapes; costs and bytes per stage "
                 "for any stage count (excludes --cost, --costs and --stage-spec)");
  sub.add_option("--gpu", opt.gpu,
                 "Accelerator of the model's roofline (see docs/formats.md): h100, h200, a100, b200, mi300x");
  sub.add_option("--pipeline-layout", opt.pipeline_layout,
                 "Megatron's layout of the model's layers over the stages, e.g. \"Et|(tt|)*3tL\", or auto (the "
                 "default): the split with the fastest slowest stage, the embedding and head counted");
  sub.add_option("--blocks-per-stage", opt.blocks_per_stage,
                 "Transformer blocks of each stage, e.g. 9,8,8,7; the embedding joins the first, the head the last "
                 "(default: balanced)")
      ->delimiter(',');
  if (with_microbatch_size)
    sub.add_option("--microbatch-size", opt.microbatch_size, "Samples per microbatch, for the model (default 1)")
        ->check(CLI::Range(1u, 1000000u));
}

std::optional<ModelPartition> load_model_partition(const SimInputOptions& opt, std::uint32_t stages,
                                                   std::uint32_t microbatch_size) {
  DiagnosticSink sink;
  std::optional<NetworkModel> model = read_model(opt.model, sink);
  print_diagnostics(sink);
  if (!model) return std::nullopt;
  ModelPartition out{std::move(*model), nullptr, {}};
  if (!opt.gpu.empty()) {
    out.gpu = find_gpu(opt.gpu);
    if (!out.gpu) {
      std::string known;
      for (const GpuSpec& g : gpus()) known += (known.empty() ? "" : ", ") + std::string(g.name);
      print_error("--gpu: unknown accelerator '" + opt.gpu + "' (known: " + known + ")");
      return std::nullopt;
    }
  }
  try {
    if (!opt.pipeline_layout.empty() && opt.pipeline_layout != "auto")
      out.partition = parse_pipeline_layout(opt.pipeline_layout, out.model, stages);
    else if (!opt.blocks_per_stage.empty())
      out.partition = explicit_partition(out.model, opt.blocks_per_stage, stages);
    else
      out.partition = balanced_partition(out.model, stages, out.gpu, microbatch_size);
  } catch (const ModelError& e) {
    const std::string what = e.what();  // a layout error names the flag and column itself
    print_error(what.rfind("--pipeline-layout", 0) == 0 ? what : opt.model + ": " + what);
    return std::nullopt;
  }
  return out;
}

namespace {

// The inputs a model file gives a pipeline: each stage's costs and bytes for this microbatch size.
std::optional<SimInputs> model_inputs(const SimInputOptions& opt, std::uint32_t ranks,
                                      const std::vector<std::uint32_t>& stage_to_rank, std::uint32_t microbatch_size) {
  if (!opt.cost.empty() || !opt.costs.empty() || !opt.stage_spec.empty()) {
    print_error("--model gives the costs and sizes of every stage: it excludes --cost, --costs and --stage-spec");
    return std::nullopt;
  }
  const auto stages = static_cast<std::uint32_t>(stage_to_rank.size());
  std::optional<ModelPartition> mp = load_model_partition(opt, stages, microbatch_size);
  if (!mp) return std::nullopt;
  SimInputs in;
  try {
    in =
        sim_inputs_from_stages(derive_stages(mp->model, mp->partition, mp->gpu, microbatch_size), stage_to_rank, ranks);
  } catch (const ModelError& e) {
    print_error(opt.model + ": " + e.what());
    return std::nullopt;
  }
  for (const auto& layers : mp->partition.layers_of_stage)
    in.stage_layers.push_back(stage_layers_label(mp->model, layers));
  in.sim.costs.overlap_factor = opt.overlap_factor;
  in.sim.blocking_comms = opt.blocking_comms;
  in.sim.send = opt.send();  // a model gives every stage's message sizes
  in.sim.p2p_queues = opt.queues();
  if (!opt.topology.empty()) {
    DiagnosticSink sink;
    in.sim.comm.topology = read_topology(opt.topology, ranks, sink);
    print_diagnostics(sink);
    if (!in.sim.comm.topology) return std::nullopt;
  }
  return in;
}

}  // namespace

namespace {

std::optional<SimInputs> inputs_without_gpus(const SimInputOptions& opt, std::uint32_t ranks,
                                             const std::vector<std::uint32_t>& stage_to_rank, const Schedule* schedule,
                                             std::uint32_t microbatch_size);

}  // namespace

std::optional<SimInputs> load_sim_inputs(const SimInputOptions& opt, std::uint32_t ranks,
                                         const std::vector<std::uint32_t>& stage_to_rank, const Schedule* schedule,
                                         std::uint32_t microbatch_size) {
  if (opt.gpu_count > 0) {
    if (opt.gpu_count > ranks) {
      print_error(
          fmt::format("--gpu-count {}: there are {} ranks, and a GPU holds at least one", opt.gpu_count, ranks));
      return std::nullopt;
    }
    if (opt.runtime_model() != Runtime::PyTorch) {
      print_error("--gpu-count applies to --runtime pytorch: the megatron model times each rank on a GPU of its own");
      return std::nullopt;
    }
  }
  std::optional<SimInputs> in = inputs_without_gpus(opt, ranks, stage_to_rank, schedule, microbatch_size);
  if (in && opt.gpu_count > 0) in->sim.device_of_rank = ranks_on_devices(ranks, opt.gpu_count);
  return in;
}

namespace {

std::optional<SimInputs> inputs_without_gpus(const SimInputOptions& opt, std::uint32_t ranks,
                                             const std::vector<std::uint32_t>& stage_to_rank, const Schedule* schedule,
                                             std::uint32_t microbatch_size) {
  if (!opt.model.empty())
    return model_inputs(opt, ranks, stage_to_rank, microbatch_size ? microbatch_size : opt.microbatch_size);
  if (!opt.gpu.empty() || !opt.pipeline_layout.empty() || !opt.blocks_per_stage.empty() || opt.microbatch_size != 1) {
    print_error("--gpu, --pipeline-layout, --blocks-per-stage and --microbatch-size describe a --model; give one");
    return std::nullopt;
  }
  const auto stages = static_cast<std::uint32_t>(stage_to_rank.size());
  if (!send_mode_has_sizes(opt.send(), !opt.stage_spec.empty(), "--stage-spec or --model")) return std::nullopt;
  SimInputs in;
  in.sim.send = opt.send();
  in.sim.p2p_queues = opt.queues();
  KindCosts per_rank = unit_costs();
  if (!opt.cost.empty()) {
    std::string error;
    auto parsed = parse_cost_shorthand(opt.cost, error);
    if (!parsed) {
      print_error("--cost " + error);
      return std::nullopt;
    }
    per_rank = *parsed;
  }
  in.sim.costs = CostModel::for_pipeline(ranks, stages, per_rank);
  in.sim.costs.overlap_factor = opt.overlap_factor;
  in.sim.blocking_comms = opt.blocking_comms;
  DiagnosticSink sink;
  bool ok = true;
  if (!opt.costs.empty()) {
    CostCoverage given;
    if (read_cost_file(opt.costs, in.sim.costs, sink, &given)) {
      CostNeeds needs;
      needs.of_one_schedule = schedule != nullptr;
      needs.kinds = schedule ? compute_kinds_by_stage(*schedule, stages) : every_compute_kind(stages);
      needs.filled_with = opt.cost.empty() ? "the unit costs" : "the --cost values";
      const bool per_trial = opt.price_what_the_table_times && !schedule && opt.fill != "unit";
      if (per_trial && first_missing_cost(needs.kinds, given)) {
        in.priced = given;  // each trial is checked against what it runs
        needs.kinds = forward_on_every_stage(stages);
      }
      ok &= check_cost_coverage(display_name(opt.costs), given, needs, opt.fill == "unit", sink);
    } else {
      ok = false;
    }
  }
  if (!opt.topology.empty()) {
    in.sim.comm.topology = read_topology(opt.topology, ranks, sink);
    ok &= in.sim.comm.topology.has_value();
  }
  if (!opt.stage_spec.empty()) {
    auto spec = read_stage_spec(opt.stage_spec, stages, sink);
    ok &= spec.has_value();
    if (spec) apply_stage_spec(in, *spec, stage_to_rank, ranks);
  }
  print_diagnostics(sink);
  if (!ok) return std::nullopt;
  return in;
}

}  // namespace

std::string cost_description(const SimInputOptions& opt) {
  if (!opt.model.empty()) return "model " + opt.model + (opt.gpu.empty() ? "" : " on " + opt.gpu);
  return opt.cost.empty() ? "F=1,I=1,W=1,B=2 (unit)" : opt.cost;
}

SimulateParameters simulate_parameters(const SimInputOptions& opt, const RuntimeModel& model, std::string time_model,
                                       const SendMode& send, P2pQueues queues) {
  return {opt.runtime,
          model.optimizer,
          opt.runtime_params,
          std::move(time_model),
          opt.blocking_comms,
          opt.overlap_factor,
          cost_description(opt),
          opt.costs,
          opt.topology,
          opt.stage_spec,
          opt.model,
          opt.gpu,
          send,
          queues};
}

}  // namespace ppsched::cli
