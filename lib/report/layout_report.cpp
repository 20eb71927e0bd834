#include "report/layout_report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "io/log_text.hpp"
#include "report/json_text.hpp"

namespace ppsched {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string schedule_of(const LayoutTrial& l) {
  const TuneTrial& t = l.schedule;
  if (l.layout.pp == 1) return fmt::format("no pipeline: m={} b={}", t.microbatches, t.microbatch_size);
  return fmt::format("{} v={} m={} b={}", t.family, t.stages_per_rank, t.microbatches, t.microbatch_size);
}

std::string seconds(double us) {
  if (us >= 1e6) return fmt::format("{:.4g} s", us / 1e6);
  return fmt::format("{:.4g} ms", us / 1e3);
}

std::string header(const LayoutRequest& r, const TuneSources& sources, const LayoutResult& result) {
  std::string out = fmt::format(
      "# ppsched tune: {} GPUs ({} per node) of {}, global batch {} samples, memory cap {:.1f} GiB per GPU "
      "({}: weights, gradients, optimizer state and activations)\n",
      r.gpus, r.gpus_per_node, printable(sources.gpu), r.global_batch, result.memory_cap / kGiB,
      r.memory_cap > 0 ? "--memory-cap" : fmt::format("the GPU's memory less {:.0f}%", 100 * kMemoryReserve));
  out += "# model " + printable(sources.model_name) + "; time model: " + printable(sources.time_model) + "\n";
  out += fmt::format(
      "# {} pipeline x tensor x data{} shapes priced, each sharding of the replicas' state; per layout its fastest "
      "schedule that fits\n",
      result.layouts,
      std::any_of(result.trials.begin(), result.trials.end(), [](const LayoutTrial& t) { return t.layout.ep > 1; })
          ? " x expert"
          : "");
  for (const std::string& note : sources.notes) out += "# note: " + printable(note) + "\n";
  out +=
      "# GPU order: tensor ranks adjacent in a node, then data replicas, then pipeline stages; data-parallel "
      "sync is not overlapped with the pipeline\n";
  return out;
}

}  // namespace

std::string layout_text(const LayoutRequest& r, const TuneSources& sources, const LayoutResult& result) {
  std::string out = header(r, sources, result);
  out += fmt::format("{:>4}  {:<28} {:<34} {:>10} {:>12} {:>6} {:>10}  {}\n", "rank", "layout", "schedule", "iteration",
                     "tokens/s/GPU", "MFU", "peak", "verdict");
  const LayoutTrial& best = result.trials.front();
  const std::size_t shown = sources.top ? std::min(sources.top, result.trials.size()) : result.trials.size();
  for (std::size_t i = 0; i < shown; ++i) {
    const LayoutTrial& t = result.trials[i];
    const std::string pos = t.fits ? std::to_string(i + 1) : "-";
    const std::string verdict = layout_verdict(t, best, result.memory_cap);
    if (t.ran)
      out += fmt::format("{:>4}  {:<28} {:<34} {:>10} {:>12.0f} {:>5.1f}% {:>6.1f} GiB  {}\n", pos,
                         layout_label(t.layout), schedule_of(t), seconds(t.iteration_us), t.tokens_per_s_per_gpu,
                         100 * t.mfu, t.peak_bytes / kGiB, verdict);
    else
      out += fmt::format("{:>4}  {:<28} {:<34} {:>10} {:>12} {:>6} {:>10}  {}\n", pos, layout_label(t.layout), "-", "-",
                         "-", "-", "-", verdict);
  }
  out += rows_not_shown(result.trials, shown);
  if (result.found()) {
    const LayoutTrial& b = result.trials.front();
    out += fmt::format(
        "# best: {} with {}: pipeline {}, data-parallel sync {}, optimizer {}; state {:.1f} GiB + activations "
        "{:.1f} GiB\n",
        layout_label(b.layout), schedule_of(b), seconds(b.pipeline_us), seconds(b.data_parallel_us),
        seconds(b.optimizer_us), b.state_bytes / kGiB, b.schedule.peak / kGiB);
  } else {
    // What the most sharded layout holds before any activation: the floor more GPUs must lower.
    double least = 0;
    for (const LayoutTrial& t : result.trials)
      if (t.ran && (least == 0 || t.state_bytes < least)) least = t.state_bytes;
    out += "# nothing fits the memory cap";
    if (least > 0)
      out += fmt::format(
          ": the least state of any layout is {:.1f} GiB per GPU (weights, gradients, optimizer); "
          "about {:.0f}x the GPUs would bring it under the cap",
          least / kGiB, std::ceil(least / result.memory_cap));
    out += "; a smaller batch or activation recompute in the model file lowers only the activations\n";
  }
  return out;
}

std::string layout_json(const LayoutRequest& r, const TuneSources& sources, const LayoutResult& result) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["input"] = {{"gpus", r.gpus},
                {"gpus_per_node", r.gpus_per_node},
                {"global_batch", r.global_batch},
                {"model", sources.model},
                {"gpu", sources.gpu},
                {"memory_cap_bytes", result.memory_cap}};
  j["parameters"] = {{"time_model", sources.time_model}, {"memory_reserve", kMemoryReserve}};
  j["notes"] = sources.notes;
  auto& rows = j["results"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < result.trials.size(); ++i) {
    const LayoutTrial& t = result.trials[i];
    nlohmann::ordered_json row;
    row["rank"] = t.fits ? nlohmann::ordered_json(i + 1) : nlohmann::ordered_json();
    row["layout"] = {{"pp", t.layout.pp}, {"tp", t.layout.tp}, {"sequence_parallel", t.layout.sequence_parallel},
                     {"dp", t.layout.dp}, {"ep", t.layout.ep}, {"sharding", sharding_name(t.layout.sharding)}};
    row["ran"] = t.ran;
    row["fits"] = t.fits;
    if (t.ran) {
      row["schedule"] = {{"family", t.schedule.family},
                         {"stages_per_rank", t.schedule.stages_per_rank},
                         {"microbatches", t.schedule.microbatches},
                         {"microbatch_size", t.schedule.microbatch_size},
                         {"bubble_ratio", t.schedule.bubble}};
      row["iteration_us"] = t.iteration_us;
      row["pipeline_us"] = t.pipeline_us;
      row["data_parallel_us"] = t.data_parallel_us;
      row["optimizer_us"] = t.optimizer_us;
      row["tokens_per_s_per_gpu"] = t.tokens_per_s_per_gpu;
      row["mfu"] = t.mfu;
      row["state_bytes"] = t.state_bytes;
      row["peak_bytes"] = t.peak_bytes;
    }
    row["verdict"] = layout_verdict(t, result.trials.front(), result.memory_cap);
    rows.push_back(std::move(row));
  }
  return json_text(j);
}

}  // namespace ppsched
