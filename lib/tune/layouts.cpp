// The layout search (layouts.hpp). Each pipeline shape (pp, tp, dp, ep) is timed once by the
// schedule tune, without a memory cap and with activations only; the data-parallel shardings are
// then applied to it: each adds its state to every trial's activation peak, picks the fastest
// trial that fits, and adds its gradient reduction, parameter gathers and optimizer step.
#include "tune/layouts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "ir/user_error.hpp"
#include "model/collectives.hpp"
#include "model/partition.hpp"
#include "model/stage_model.hpp"
#include "sim/sim_inputs.hpp"

namespace ppsched {

namespace {

std::vector<std::uint32_t> divisors(std::uint32_t n) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

bool is_moe(const NetworkModel& m) {
  return std::any_of(m.layers.begin(), m.layers.end(), [](const Layer& l) { return l.type == LayerType::MoeBlock; });
}

std::uint64_t kv_heads(const NetworkModel& m) { return m.kv_heads ? m.kv_heads : m.heads; }

// The links of a layout's groups (layouts.hpp: tensor ranks adjacent, then data, then pipeline).
LayerParallelism split_of(const ParallelLayout& l, const LayoutRequest& r, const GpuSpec& gpu) {
  LayerParallelism s;
  s.tp = l.tp;
  s.sequence_parallel = l.sequence_parallel;
  s.tp_link = scale_up_link(gpu);
  s.ep = l.ep;
  // An expert group is ep adjacent GPUs of a tensor x data block: inside a node when it fits one.
  s.ep_link = l.ep <= r.gpus_per_node ? scale_up_link(gpu) : scale_out_link(gpu);
  return s;
}

Topology pipeline_topology(const ParallelLayout& l, const LayoutRequest& r, const GpuSpec& gpu) {
  Topology t;
  for (std::uint32_t rank = 0; rank < l.pp; ++rank) {
    t.node_of_rank.push_back(static_cast<std::uint32_t>(std::uint64_t(rank) * l.tp * l.dp / r.gpus_per_node));
    t.slice_of_rank.push_back(0);
  }
  t.intra_node = scale_up_link(gpu);
  t.inter_node = t.inter_slice = scale_out_link(gpu);
  return t;
}

// The parameters one GPU holds: the dense ones, data-parallel over the dp replicas, and the routed
// experts', data-parallel over the dp x tp / ep GPUs that hold the same experts.
struct Held {
  double dense = 0, experts = 0;
};

std::uint32_t expert_replicas(const ParallelLayout& l) { return std::max(1u, l.dp * l.tp / std::max(1u, l.ep)); }

// Without a pipeline, FSDP frees each block's gathered weights after its forward and gathers them
// again for its backward (torchtitan's default); under a pipeline it gathers a rank's stages once
// and keeps them for the step, as PyTorch's pipelining sets it up.
bool reshards_each_block(DataSharding s, const ParallelLayout& l) { return s == DataSharding::Full && l.pp == 1; }

// Bytes of state per parameter under a sharding over n replicas: weights, gradients and optimizer
// state (the weights whole: gathered for the step, or never sharded).
double per_param(const NetworkModel& m, DataSharding s, double n) {
  const double d = m.dtype_bytes, g = m.grad_bytes_per_param, o = m.optimizer_bytes_per_param;
  switch (s) {
    case DataSharding::None:
      return d + g + o;
    case DataSharding::Optimizer:
      return d + g + o / n;
    case DataSharding::Gradients:
    case DataSharding::Full:
      return d + (g + o) / n;
  }
  return d + g + o;
}

// Bytes of state one GPU holds for its parameters (the largest block's `block_params`) under a
// sharding. FSDP resharding each block holds every weight sharded, and two blocks' gathered.
double state_bytes(const NetworkModel& m, DataSharding s, const ParallelLayout& l, const Held& p, double block_params) {
  if (reshards_each_block(s, l)) {
    const double all = m.dtype_bytes + m.grad_bytes_per_param + m.optimizer_bytes_per_param;
    return p.dense * all / l.dp + p.experts * all / expert_replicas(l) + 2 * block_params * m.dtype_bytes;
  }
  return p.dense * per_param(m, s, l.dp) + p.experts * per_param(m, s, expert_replicas(l));
}

// The data-parallel work of one rank per step: DDP all-reduces the gradients; the sharded kinds
// reduce-scatter them and all-gather the weights, once a step. None of it is overlapped with the
// pipeline (its reduction starts after a stage's last backward, near the end of the step), except
// FSDP's per-block gathers without a pipeline, which prefetch under the compute (`compute_us`):
// twice per microbatch, with a reduce-scatter per microbatch.
double data_parallel_us(const NetworkModel& m, DataSharding s, const ParallelLayout& l, const Held& p,
                        std::uint32_t microbatches, double compute_us, const Link& link) {
  double us = 0;
  for (const auto& [params, group] : {std::pair{p.dense, l.dp}, std::pair{p.experts, expert_replicas(l)}}) {
    const double grads = params * m.grad_bytes_per_param, weights = params * m.dtype_bytes;
    if (s == DataSharding::None)
      us += all_reduce_us(grads, group, link);
    else if (reshards_each_block(s, l))
      us += microbatches * (2 * all_gather_us(weights, group, link) + reduce_scatter_us(grads, group, link));
    else
      us += reduce_scatter_us(grads, group, link) + all_gather_us(weights, group, link);
  }
  return reshards_each_block(s, l) ? std::max(0.0, us - compute_us) : us;
}

// Adam over the parameters a GPU updates: it reads the fp32 weight, gradient and two moments and
// writes the weight, the moments and the bf16 copy, 30 bytes a parameter, at the elementwise rate.
double optimizer_us(const GpuSpec& gpu, DataSharding s, const ParallelLayout& l, const Held& p) {
  const bool sharded = s != DataSharding::None;
  const double updated = sharded ? p.dense / l.dp + p.experts / expert_replicas(l) : p.dense + p.experts;
  return updated * 30.0 / (gpu.hbm_bytes_per_s * gpu.memory_efficiency) * 1e6;
}

// The parameters each pipeline rank holds for a trial's partition and placement.
std::vector<Held> held_per_rank(const NetworkModel& m, const GpuSpec& gpu, const LayerParallelism& split,
                                const std::vector<std::uint32_t>& stage_to_rank, std::uint32_t ranks,
                                std::uint32_t microbatch_size) {
  const auto stages = static_cast<std::uint32_t>(stage_to_rank.size());
  const StageModel sm =
      derive_stages(m, balanced_partition(m, stages, &gpu, microbatch_size), &gpu, microbatch_size, split);
  std::vector<Held> out(ranks);
  for (std::uint32_t s = 0; s < stages; ++s) {
    out[stage_to_rank[s]].dense += sm.params[s] - sm.expert_params[s];
    out[stage_to_rank[s]].experts += sm.expert_params[s];
  }
  return out;
}

struct Shape {
  ParallelLayout layout;  // sharding left at None: the shape's shardings come after
  std::vector<DataSharding> shardings;
};

// The shapes of the enumerated layouts, each with its shardings, in enumeration order.
std::vector<Shape> shapes_of(const std::vector<ParallelLayout>& layouts) {
  std::vector<Shape> out;
  for (const ParallelLayout& l : layouts) {
    ParallelLayout key = l;
    key.sharding = DataSharding::None;
    auto same = [&](const Shape& s) {
      return s.layout.pp == key.pp && s.layout.tp == key.tp && s.layout.dp == key.dp && s.layout.ep == key.ep;
    };
    auto it = std::find_if(out.begin(), out.end(), same);
    if (it == out.end()) it = out.insert(out.end(), Shape{key, {}});
    it->shardings.push_back(l.sharding);
  }
  return out;
}

}  // namespace

std::string_view sharding_name(DataSharding s) {
  switch (s) {
    case DataSharding::None:
      return "DDP";
    case DataSharding::Optimizer:
      return "ZeRO-1";
    case DataSharding::Gradients:
      return "ZeRO-2";
    case DataSharding::Full:
      return "FSDP";
  }
  return "DDP";
}

std::string layout_label(const ParallelLayout& l) {
  std::string out = fmt::format("pp{} tp{}{} dp{}", l.pp, l.tp, l.sequence_parallel ? "+SP" : "", l.dp);
  if (l.ep > 1) out += fmt::format(" ep{}", l.ep);
  if (l.dp > 1) out += fmt::format(" {}", sharding_name(l.sharding));
  return out;
}

std::vector<ParallelLayout> enumerate_layouts(const LayoutRequest& r, const NetworkModel& m) {
  std::vector<ParallelLayout> out;
  const std::uint32_t n = r.gpus, blocks = m.block_count();
  for (std::uint32_t tp = 1; tp <= r.gpus_per_node && tp <= n; tp *= 2) {
    if (n % tp || m.heads % tp || (kv_heads(m) % tp && tp % kv_heads(m))) continue;
    for (std::uint32_t pp : divisors(n / tp)) {
      if (pp > blocks + 2) continue;
      const std::uint32_t dp = n / (tp * pp);
      if (r.global_batch % dp) continue;  // every replica takes the same share of the batch
      std::vector<std::uint32_t> eps{1};
      if (is_moe(m)) {
        eps.clear();
        for (std::uint32_t e : divisors(dp * tp))
          if (m.moe.experts % e == 0) eps.push_back(e);
      }
      for (std::uint32_t ep : eps)
        for (DataSharding s : {DataSharding::None, DataSharding::Optimizer, DataSharding::Full}) {
          if (dp == 1 && s != DataSharding::None) continue;
          out.push_back({pp, tp, dp, ep, tp > 1, s});
        }
    }
  }
  return out;
}

LayoutResult tune_layouts(const LayoutRequest& r, const NetworkModel& m, const GpuSpec& gpu,
                          const std::function<void(std::size_t, std::size_t)>& progress) {
  if (r.gpus == 0 || r.gpus_per_node == 0) throw UserError("--gpus and --gpus-per-node must be at least 1");
  if (r.global_batch == 0) throw UserError("--gpus needs --global-batch: the samples of one step");
  LayoutResult result;
  result.memory_cap = r.memory_cap > 0 ? r.memory_cap : gpu.memory_bytes * (1 - kMemoryReserve);
  const std::vector<ParallelLayout> layouts = enumerate_layouts(r, m);
  if (layouts.empty())
    throw UserError(fmt::format(
        "no layout of {} GPUs serves a global batch of {}: pipeline x tensor x data must make {} with tensor "
        "parallelism a power of two within a node of {} dividing the {} heads, at most {} pipeline stages, and a "
        "data-parallel degree dividing the batch",
        r.gpus, r.global_batch, r.gpus, r.gpus_per_node, m.heads, m.block_count() + 2));
  double flops_per_sample = 0;
  for (const Layer& l : m.layers) flops_per_sample += layer_flops(m, l, 1);
  const double tokens_per_step = double(r.global_batch) * double(m.sequence_length);

  const std::vector<Shape> shapes = shapes_of(layouts);
  for (const Shape& shape : shapes) {
    if (progress) progress(result.layouts, shapes.size());
    ++result.layouts;
    const ParallelLayout& l = shape.layout;
    const LayerParallelism split = split_of(l, r, gpu);
    const double block_params = layer_cost(m, m.layers[1], &gpu, 1, split).params;
    TuneRequest req = r.schedules;
    req.ranks = l.pp;
    if (l.pp == 1) {  // no pipeline: gradient accumulation over the microbatches, one stage
      req.families = {"1F1B"};
      req.stages_per_rank = {1};
    }
    req.microbatches = 0;
    req.global_batch = r.global_batch / l.dp;
    // Microbatch counts from the pipeline's depth to 8 times it (fewer leave more bubble, more
    // only shrink the kernels), or the largest the replica's batch allows.
    req.min_microbatches = std::min(l.pp, req.global_batch);
    req.max_microbatches = std::max(8 * l.pp, req.min_microbatches);
    req.memory_cap = 0;
    req.liveness.reset();
    req.max_stages = m.block_count() + 2;
    req.only_stages = 0;
    std::optional<TuneResult> tuned;
    std::string note;
    try {
      tuned = tune_schedules(
          req, tune_trials(req),
          [&](const std::vector<std::uint32_t>& stage_to_rank, std::uint32_t b) -> std::optional<SimInputs> {
            const auto stages = static_cast<std::uint32_t>(stage_to_rank.size());
            StageModel sm = derive_stages(m, balanced_partition(m, stages, &gpu, b), &gpu, b, split);
            for (StageSpec& spec : sm.spec) spec.weight_bytes = 0;  // the state comes per sharding
            SimInputs in = sim_inputs_from_stages(sm, stage_to_rank, l.pp);
            in.sim.comm.topology = pipeline_topology(l, r, gpu);
            return in;
          });
    } catch (const UserError& e) {
      note = e.what();
    }
    for (DataSharding sharding : shape.shardings) {
      LayoutTrial t;
      t.layout = l;
      t.layout.sharding = sharding;
      if (!tuned || tuned->trials.empty() || !tuned->trials.front().ran) {
        t.note = note.empty() ? "no schedule of this pipeline ran" : note;
        result.trials.push_back(std::move(t));
        continue;
      }
      const Link dp_link = l.tp * l.dp <= r.gpus_per_node ? scale_up_link(gpu) : scale_out_link(gpu);
      // The fastest trial whose activations fit beside this sharding's state; else the fastest.
      const TuneTrial* chosen = nullptr;
      double state = 0;
      for (const TuneTrial& trial : tuned->trials) {
        if (!trial.ran) continue;
        const Schedule s = tune_schedule_of(req, trial);
        const std::vector<Held> held =
            held_per_rank(m, gpu, split, s.placement.stage_to_rank, l.pp, trial.microbatch_size);
        // The rank with the most state (the same rank holds the most of every part in practice).
        const Held* most = &held.front();
        for (const Held& h : held)
          if (state_bytes(m, sharding, t.layout, h, block_params) >
              state_bytes(m, sharding, t.layout, *most, block_params))
            most = &h;
        const double bytes = state_bytes(m, sharding, t.layout, *most, block_params);
        const bool fits = bytes + trial.peak <= result.memory_cap;
        if (!chosen || fits) {
          chosen = &trial;
          state = bytes;
          t.data_parallel_us = data_parallel_us(m, sharding, t.layout, *most, trial.microbatches,
                                                trial.iteration_time * (1 - trial.bubble), dp_link);
          t.optimizer_us = optimizer_us(gpu, sharding, t.layout, *most);
        }
        if (fits) break;
      }
      t.schedule = *chosen;
      t.ran = true;
      t.state_bytes = state;
      t.peak_bytes = state + chosen->peak;
      t.fits = t.peak_bytes <= result.memory_cap;
      t.pipeline_us = chosen->iteration_time;
      t.iteration_us = t.pipeline_us + t.data_parallel_us + t.optimizer_us;
      t.tokens_per_s_per_gpu = tokens_per_step / (t.iteration_us * 1e-6) / r.gpus;
      t.mfu = flops_per_sample * r.global_batch / (t.iteration_us * 1e-6) / (r.gpus * gpu.peak_flops);
      t.compute_us_per_sample = t.pipeline_us * (1 - chosen->bubble) * r.gpus / r.global_batch;
      result.trials.push_back(std::move(t));
    }
  }
  if (progress) progress(result.layouts, shapes.size());
  std::stable_sort(result.trials.begin(), result.trials.end(), [](const LayoutTrial& a, const LayoutTrial& b) {
    auto group = [](const LayoutTrial& t) { return t.fits ? 0 : t.ran ? 1 : 2; };
    if (group(a) != group(b)) return group(a) < group(b);
    if (group(a) == 1) return a.peak_bytes < b.peak_bytes;
    return a.iteration_us < b.iteration_us;
  });
  return result;
}

std::string layout_verdict(const LayoutTrial& t, const LayoutTrial& best, double memory_cap) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  if (!t.ran) return "cannot run: " + t.note.substr(0, t.note.find('\n'));
  if (!t.fits)
    return fmt::format("over the cap: {:.1f} GiB ({:.1f} of state) > {:.1f} GiB", t.peak_bytes / kGiB,
                       t.state_bytes / kGiB, memory_cap / kGiB);
  if (&t == &best) return "best";
  std::string why = fmt::format("{:+.1f}% time", 100.0 * (t.iteration_us / best.iteration_us - 1.0));
  std::vector<std::string> reasons;
  if (t.schedule.bubble > best.schedule.bubble + 0.005)
    reasons.push_back(fmt::format("bubble {:.1f}% vs {:.1f}%", 100 * t.schedule.bubble, 100 * best.schedule.bubble));
  const double exposed = t.data_parallel_us + t.optimizer_us, best_exposed = best.data_parallel_us + best.optimizer_us;
  if (exposed > best_exposed * 1.05 + 1.0 && exposed > 0.01 * t.iteration_us)
    reasons.push_back(
        fmt::format("data-parallel sync and optimizer {:.0f} ms vs {:.0f} ms", exposed / 1e3, best_exposed / 1e3));
  if (t.compute_us_per_sample > best.compute_us_per_sample * 1.02)
    reasons.push_back(fmt::format("GPU time per sample +{:.0f}% (smaller kernels, tensor-parallel collectives)",
                                  100 * (t.compute_us_per_sample / best.compute_us_per_sample - 1)));
  for (std::size_t i = 0; i < reasons.size(); ++i) why += (i ? ", " : ": ") + reasons[i];
  return why;
}

}  // namespace ppsched
