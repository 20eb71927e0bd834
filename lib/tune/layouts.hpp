// `ppsched tune --gpus N`: the whole layout around the pipeline (issue 46). Every way to split N
// GPUs into pipeline x tensor x data parallel groups (x expert parallel inside data x tensor for
// MoE models), each with each way the data-parallel replicas hold the model's state, is priced
// from the model file: each pipeline shape runs the schedule tune of tune.hpp (every family and
// the automatic schedule, every microbatch count near the pipeline's depth) on costs and
// activations per GPU (model/network.hpp LayerParallelism), and the data-parallel work is added
// after it. The ranking and the reasons why each loser lost are report/tune_report.hpp's.
//
// The GPU order is Megatron's and torchtitan's: tensor-parallel ranks adjacent (inside a node),
// then data-parallel replicas, then pipeline stages outermost. So a tensor group never leaves its
// node, a data-parallel group leaves it once tp x dp exceeds the node, and a pipeline hop crosses
// nodes once tp x dp fills one.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/gpu.hpp"
#include "model/network.hpp"
#include "tune/sharding.hpp"
#include "tune/tune.hpp"

namespace ppsched {

struct ParallelLayout {
  std::uint32_t pp = 1, tp = 1, dp = 1, ep = 1;
  bool sequence_parallel = false;
  DataSharding sharding = DataSharding::None;
};

/// "pp 8 x tp 4 x dp 2 (ZeRO-1), SP" and the like.
std::string layout_label(const ParallelLayout& layout);

struct LayoutRequest {
  std::uint32_t gpus = 0, gpus_per_node = 8;
  std::uint32_t global_batch = 0;  ///< samples per step, over every replica
  /// Bytes per GPU; 0: the GPU's memory less kMemoryReserve.
  double memory_cap = 0;
  /// The schedule tune of each pipeline shape: families, runtime, optimizer, stages per rank,
  /// budget. Its ranks, batch and stage limits are set per shape.
  TuneRequest schedules;
};

/// What a GPU keeps back from the model: the CUDA context, NCCL's buffers and the caching
/// allocator's fragmentation (the cap without --memory-cap is the GPU's memory less this share).
inline constexpr double kMemoryReserve = 0.10;

/// One layout with the best schedule of its pipeline, and what it costs.
struct LayoutTrial {
  ParallelLayout layout;
  TuneTrial schedule;  ///< the pipeline's best trial (its peak: activations only)
  bool ran = false, fits = false;
  std::string note;             ///< why it did not run (no schedule, or the state alone over the cap)
  double pipeline_us = 0;       ///< the schedule's iteration, tensor-parallel collectives included
  double data_parallel_us = 0;  ///< the gradient reduction and parameter gathers, not overlapped
  double optimizer_us = 0;      ///< the optimizer step over the state this GPU updates
  double iteration_us = 0;      ///< the three together
  double state_bytes = 0;       ///< the largest rank's weights, gradients and optimizer state
  double peak_bytes = 0;        ///< state + the schedule's activation peak
  double tokens_per_s_per_gpu = 0, mfu = 0;
  double compute_us_per_sample = 0;  ///< busy GPU time per sample: how fast the kernels are
};

struct LayoutResult {
  std::vector<LayoutTrial> trials;  ///< best first: fitting by iteration time, then over the cap, then not run
  double memory_cap = 0;            ///< bytes, as applied
  std::size_t layouts = 0;          ///< pipeline x tensor x data x expert shapes enumerated
  bool found() const { return !trials.empty() && trials.front().fits; }
};

/// The layouts of `request` for `model` (every one, including those whose state alone cannot fit).
std::vector<ParallelLayout> enumerate_layouts(const LayoutRequest& request, const NetworkModel& model);

/// Prices every layout and ranks them. Throws UserError for a request no layout can serve
/// (GPUs that no split of the model allows, a global batch smaller than every data-parallel
/// degree) and ModelError for a model the op-level model cannot price.
/// `progress`, when given, is called after each pipeline shape with the shapes done and in all.
LayoutResult tune_layouts(const LayoutRequest& request, const NetworkModel& model, const GpuSpec& gpu,
                          const std::function<void(std::size_t done, std::size_t total)>& progress = {});

/// One line on a trial against the best: "best", "+12.0% time: more bubble (..), more exposed
/// communication (..)", "over the cap: ...", "cannot run: ...".
std::string layout_verdict(const LayoutTrial& trial, const LayoutTrial& best, double memory_cap);

}  // namespace ppsched
