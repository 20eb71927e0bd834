#include "report/tune_report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "io/log_text.hpp"
#include "report/json_text.hpp"
#include "synth/synth.hpp"

namespace ppsched {

namespace {

std::string shape(const TuneRequest& req, const TuneTrial& t) {
  std::string out = fmt::format("v={} m={}", t.stages_per_rank, t.microbatches);
  if (req.global_batch || t.microbatch_size != 1) out += fmt::format(" b={}", t.microbatch_size);
  return out;
}

std::string format_time(double t, bool in_us) {
  if (!in_us) return fmt::format("{:.6g}", t);
  if (t >= 1e6) return fmt::format("{:.4g} s", t / 1e6);
  if (t >= 1e3) return fmt::format("{:.4g} ms", t / 1e3);
  return fmt::format("{:.4g} us", t);
}

double samples_of(const TuneTrial& t) { return double(t.microbatches) * t.microbatch_size; }

/// Samples per second when times are microseconds, else samples per time unit.
double throughput(const TuneTrial& t, bool in_us) {
  if (t.iteration_time <= 0) return 0;
  return samples_of(t) / (in_us ? t.iteration_time * 1e-6 : t.iteration_time);
}

nlohmann::ordered_json or_null(bool present, auto value) {
  return present ? nlohmann::ordered_json(value) : nlohmann::ordered_json();
}

}  // namespace

std::vector<std::string> untried_shape_notes(const TuneRequest& request) {
  std::vector<std::string> notes;
  if (request.only_stages) return notes;
  const std::vector<std::uint32_t> shapes = tune_shapes(request);
  for (std::uint32_t v : request.stages_per_rank)
    if (std::find(shapes.begin(), shapes.end(), v) == shapes.end())
      notes.push_back(std::to_string(v) + " stage(s) per rank not tried: " + std::to_string(request.ranks * v) +
                      " stages exceed the " + std::to_string(request.max_stages) +
                      " its blocks, embedding and head allow");
  return notes;
}

std::string format_tune_memory(double value, bool in_bytes) {
  if (!in_bytes) return fmt::format("{:.4g}", value);
  return fmt::format("{:.1f} GiB", value / double(1ull << 30));
}

std::string tune_json(const TuneRequest& request, const TuneSources& sources, const TuneResult& result) {
  nlohmann::ordered_json j;
  j["schema_version"] = 2;
  j["input"] = {{"ranks", request.ranks},
                {"microbatches", or_null(request.microbatches != 0, request.microbatches)},
                {"global_batch", or_null(request.global_batch != 0, request.global_batch)},
                {"memory_cap", or_null(request.memory_cap > 0, request.memory_cap)},
                {"stages_per_rank", tune_shapes(request)},
                {"cost", sources.cost},
                {"costs_file", sources.costs_file},
                {"topology", sources.topology},
                {"stage_spec", sources.stage_spec},
                {"model", sources.model},
                {"gpu", sources.gpu}};
  j["parameters"] = {{"runtime", runtime_name(request.runtime)},
                     {"time_model", sources.time_model},
                     {"time_unit", sources.times_in_us ? "us" : "cost units"},
                     {"memory_unit", request.liveness ? fmt::format("activation slots (PyTorch's liveness, {})",
                                                                    liveness_granularity_name(*request.liveness))
                                     : sources.memory_in_bytes ? "bytes"
                                     : request.global_batch    ? "samples of activation"
                                                               : "microbatches of activation"}};
  if (request.liveness) {  // only then, so that the byte model's report is as it always was
    j["parameters"]["memory_model"] = "pytorch-liveness";
    j["parameters"]["liveness_granularity"] = liveness_granularity_name(*request.liveness);
  }
  j["notes"] = sources.notes;
  auto& rows = j["results"] = nlohmann::ordered_json::array();
  const TuneTrial& best = result.trials.front();
  auto mem = [&](double v) { return format_tune_memory(v, sources.memory_in_bytes); };
  for (std::size_t i = 0; i < result.trials.size(); ++i) {
    const TuneTrial& t = result.trials[i];
    nlohmann::ordered_json row;
    row["rank"] = or_null(t.ran && t.fits, i + 1);
    row["schedule"] = t.family;
    row["stages_per_rank"] = t.stages_per_rank;
    row["microbatches"] = t.microbatches;
    row["microbatch_size"] = t.microbatch_size;
    row["ran"] = t.ran;
    row["fits"] = t.fits;
    if (t.ran) {
      row["iteration_time"] = t.iteration_time;
      row["throughput"] = throughput(t, sources.times_in_us);
      row["bubble_ratio"] = t.bubble;
      row["peak_memory"] = t.peak;
    }
    row["verdict"] = tune_verdict(t, best, request.memory_cap, mem);
    if (is_auto_schedule(t.family) && t.ran) row["auto_origin"] = t.note;
    rows.push_back(std::move(row));
  }
  return json_text(j);
}

std::string tune_text(const TuneRequest& request, const TuneSources& sources, const TuneResult& result) {
  auto mem = [&](double v) { return format_tune_memory(v, sources.memory_in_bytes); };
  const std::string cap = request.memory_cap > 0 ? mem(request.memory_cap) : "none";
  const std::string counts =
      request.microbatches
          ? fmt::format("{} microbatches", request.microbatches)
          : fmt::format("global batch {} (every microbatch count that divides it)", request.global_batch);
  const std::string unit =
      request.liveness
          ? fmt::format("PyTorch's activation slots per rank, {}", liveness_granularity_name(*request.liveness))
      : sources.memory_in_bytes ? "bytes per rank: weights, gradients, optimizer state and activations"
      : request.global_batch    ? "samples of activation per rank"
                                : "microbatches of activation per rank";
  std::string costs = !sources.model.empty() ? "model " + sources.model_name +
                                                   (sources.gpu.empty() ? " (measured times)" : " on " + sources.gpu)
                      : !sources.costs_file.empty() ? "costs " + sources.costs_file
                                                    : "costs " + sources.cost;
  std::string out = fmt::format("# ppsched tune: {} ranks, {}, stages per rank {}, memory cap {} ({})\n", request.ranks,
                                counts, fmt::join(tune_shapes(request), "/"), cap, unit);
  // File names, a model's and a runtime file's names are the user's: one line each, printable.
  out += "# " + printable(costs) + "; time model: " + printable(sources.time_model) + "\n";
  for (const std::string& note : sources.notes) out += "# note: " + printable(note) + "\n";
  out += "# bubble = 1 - busy / (ranks x time); b = samples per microbatch\n";
  const char* rate = sources.times_in_us ? "samples/s" : "samples/t";
  out += fmt::format("{:>4}  {:<22} {:<18} {:>12} {:>11} {:>7} {:>11}  {}\n", "rank", "schedule", "shape", "iteration",
                     rate, "bubble", "peak", "verdict");
  const TuneTrial& best = result.trials.front();
  const std::size_t shown = sources.top ? std::min(sources.top, result.trials.size()) : result.trials.size();
  for (std::size_t i = 0; i < shown; ++i) {
    const TuneTrial& t = result.trials[i];
    const std::string pos = t.ran && t.fits ? std::to_string(i + 1) : "-";
    const std::string verdict = tune_verdict(t, best, request.memory_cap, mem);
    if (t.ran)
      out += fmt::format("{:>4}  {:<22} {:<18} {:>12} {:>11.4g} {:>6.1f}% {:>11}  {}\n", pos, t.family,
                         shape(request, t), format_time(t.iteration_time, sources.times_in_us),
                         throughput(t, sources.times_in_us), 100 * t.bubble, mem(t.peak), verdict);
    else
      out += fmt::format("{:>4}  {:<22} {:<18} {:>12} {:>11} {:>7} {:>11}  {}\n", pos, t.family, shape(request, t), "-",
                         "-", "-", "-", verdict);
  }
  out += rows_not_shown(result.trials, shown);
  if (result.found() && is_auto_schedule(best.family)) out += "# auto's schedule came from: " + best.note + "\n";
  if (!result.found()) out += "# nothing fits the memory cap\n";
  return out;
}

}  // namespace ppsched
