// What the timed simulator needs besides the schedule: costs, topology, stage spec and the memory
// model they imply. Shared by simulate, compile/simulate --schedule auto and tune, so the flags
// mean the same everywhere.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/gpu.hpp"
#include "model/network.hpp"
#include "model/partition.hpp"
#include "report/simulate_report.hpp"
#include "sim/activation_liveness.hpp"
#include "sim/p2p_queues.hpp"
#include "sim/runtime.hpp"
#include "sim/send_mode.hpp"
#include "sim/sim_inputs.hpp"

namespace CLI {
class App;
}

namespace ppsched::cli {

struct SimInputOptions {
  std::string cost;   ///< shorthand, per rank
  std::string costs;  ///< cost table file
  /// What a (stage, kind) the cost table leaves out costs: "none" (an error) or "unit" (the
  /// shorthand's value, unit costs by default, with a warning).
  std::string fill = "none";
  double overlap_factor = 1.0;
  std::string stage_spec, topology;
  bool blocking_comms = false;
  /// --send-mode (simulate only; tune and compile keep the default): how a SEND completes.
  std::string send_mode = "rendezvous";
  /// --p2p-queues (simulate and validate): which SENDs and RECVs of a rank share an in-order queue.
  std::string p2p_queues = "per-rank";
  std::string runtime = "pytorch";  ///< sim/runtime.hpp; only simulate and tune offer --runtime
  std::string optimizer = "sync";   ///< sim/runtime.hpp Optimizer
  std::string runtime_params;       ///< --runtime-params: a file replacing megatron's figures
  /// A model file (model/network.hpp): costs and bytes per stage for any stage count.
  std::string model, gpu, pipeline_layout;
  std::vector<std::uint32_t> blocks_per_stage;  ///< --blocks-per-stage: an explicit partition
  std::uint32_t microbatch_size = 1;            ///< samples per microbatch, for the model
  /// --gpu-count (simulate only): the ranks share this many GPUs, 0 = a GPU per rank.
  std::uint32_t gpu_count = 0;
  /// tune: a cost table that times F on every stage but leaves other kinds out prices the trials
  /// it can (SimInputs::priced), instead of being refused whole.
  bool price_what_the_table_times = false;

  Runtime runtime_model() const { return *runtime_from_name(runtime); }
  /// The option's check has admitted only what parse_send_mode reads.
  SendMode send() const { return *parse_send_mode(send_mode); }
  /// Likewise parse_p2p_queues.
  P2pQueues queues() const { return *parse_p2p_queues(p2p_queues); }
  Optimizer optimizer_model() const { return *optimizer_from_name(optimizer); }
};

/// Adds --cost, --costs, --fill, --overlap-factor, --stage-spec, --topology and --blocking-comms.
void add_sim_input_options(CLI::App& sub, SimInputOptions& opt);

/// Adds --send-mode rendezvous|eager|eager:BYTES (simulate and validate): how a SEND completes
/// (sim/send_mode.hpp). A value it cannot read is a usage error that names the accepted forms.
void add_send_mode_option(CLI::App& sub, std::string& send_mode);

/// Adds --p2p-queues per-rank|per-direction|per-pair|per-edge (simulate, validate, tune): which
/// point-to-point transfers of a rank share one in-order communicator queue (sim/p2p_queues.hpp);
/// with `measured` (trace) also `measured`, the queues a profiled run's NCCL streams show.
void add_p2p_queues_option(CLI::App& sub, std::string& p2p_queues, bool measured = false);

/// Whether `mode` can be applied: an eager threshold compares message sizes, so it needs them
/// (`has_sizes`: a stage spec or a model was given). Prints why not and returns false.
bool send_mode_has_sizes(const SendMode& mode, bool has_sizes, const std::string& sizes_from);

/// Adds --gpu-count N (simulate): the ranks share N GPUs as `ppsched run` spreads them, and ranks
/// on one GPU take turns on its compute (sim/timed.hpp).
void add_gpu_count_option(CLI::App& sub, SimInputOptions& opt);

/// Adds --runtime, --runtime-params and --optimizer: which runtime's execution the numbers describe
/// and how its iterations meet (simulate and tune).
void add_runtime_option(CLI::App& sub, SimInputOptions& opt);

/// Adds --optimizer alone (compile: what --schedule auto minimises; add_runtime_option adds it too).
void add_optimizer_option(CLI::App& sub, SimInputOptions& opt);

/// The runtime model the options ask for, its figures read from --runtime-params when given; prints
/// the problem and returns nullopt (a flag the runtime does not take, unreadable figures).
std::optional<RuntimeModel> load_runtime_model(const SimInputOptions& opt);

/// Refuses (prints why, returns true) --blocking-comms, --send-mode and --p2p-queues where they change nothing:
/// `as_run` has no SEND or RECV (under --runtime ideal a compute-only schedule's transfers are
/// implicit).
bool refuse_inert_comm_flags(const SimInputOptions& opt, const Schedule& as_run);

/// Prints why and returns true when a flag that only the timed simulator reads (--send-mode,
/// --p2p-queues, --gpu-count) is given to PyTorch's lock-step dry run.
bool refuse_timed_only_flags(const SimInputOptions& opt);

/// "pytorch: ...; optimizer sync: ...": the time model of a report, for its header or summary.
std::string time_model_description(const SimInputOptions& opt, const RuntimeModel& model);

/// Adds --model, --gpu, --pipeline-layout, --blocks-per-stage and (unless `with_microbatch_size` is
/// false: tune derives it from the global batch) --microbatch-size.
void add_model_options(CLI::App& sub, SimInputOptions& opt, bool with_microbatch_size = true);

/// Reads every input for a pipeline of `ranks` ranks and `stage_to_rank.size()` stages; prints
/// each problem and returns nullopt on any. A cost table must price every compute kind that
/// `schedule` runs on each stage, or, when the schedule is not known yet (tune, the automatic
/// search: null), every compute kind on every stage; --fill unit turns a gap into a warning.
/// A model prices microbatches of `microbatch_size` samples (0: the option's).
std::optional<SimInputs> load_sim_inputs(const SimInputOptions& opt, std::uint32_t ranks,
                                         const std::vector<std::uint32_t>& stage_to_rank,
                                         const Schedule* schedule = nullptr, std::uint32_t microbatch_size = 0);

/// The partition of the model into `stages` stages the options ask for (balanced by default);
/// prints the problem and returns nullopt. Reads the model file.
struct ModelPartition {
  NetworkModel model;
  const GpuSpec* gpu = nullptr;
  Partition partition;
};
std::optional<ModelPartition> load_model_partition(const SimInputOptions& opt, std::uint32_t stages,
                                                   std::uint32_t microbatch_size);

/// --memory-model and --liveness-granularity: what a memory cap counts, ppsched's byte model or
/// PyTorch's activation slots (sim/activation_liveness.hpp). The same flags for simulate, validate
/// and tune.
struct MemoryModelOptions {
  std::string model = "bytes";  ///< or "pytorch-liveness"
  std::string granularity = "stage_microbatch";
  /// Nullopt for the byte model; else the granularity whose slots the cap counts.
  std::optional<LivenessGranularity> liveness() const;
};

/// Adds --memory-model and --liveness-granularity; `cap_flag` is the flag whose unit they set
/// (--memory-cap, --max-memory), for the help.
void add_memory_model_options(CLI::App& sub, MemoryModelOptions& opt, const std::string& cap_flag);

/// "F=1,I=1,W=1,B=2 (unit)" or the shorthand given, for reports.
std::string cost_description(const SimInputOptions& opt);

/// simulate's "parameters" block (report/simulate_report.hpp): each input flag as given, with
/// the runtime model's optimizer, the time model and the send mode in effect.
SimulateParameters simulate_parameters(const SimInputOptions& opt, const RuntimeModel& model, std::string time_model,
                                       const SendMode& send, P2pQueues queues);

}  // namespace ppsched::cli
