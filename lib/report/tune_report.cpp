#include "report/tune_report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "report/json_text.hpp"
#include "synth/synth.hpp"

namespace ppsched {

namespace {

std::string shape(const TuneTrial& t) { return fmt::format("v={} m={}", t.stages_per_rank, t.microbatches); }

nlohmann::ordered_json or_null(bool present, auto value) {
  return present ? nlohmann::ordered_json(value) : nlohmann::ordered_json();
}

}  // namespace

std::string tune_json(const TuneRequest& request, const TuneSources& sources, const TuneResult& result) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["input"] = {{"ranks", request.ranks},
                {"microbatches", or_null(request.microbatches != 0, request.microbatches)},
                {"global_batch", or_null(request.global_batch != 0, request.global_batch)},
                {"memory_cap", or_null(request.memory_cap > 0, request.memory_cap)},
                {"cost", sources.cost},
                {"costs_file", sources.costs_file},
                {"topology", sources.topology},
                {"stage_spec", sources.stage_spec}};
  auto& rows = j["results"] = nlohmann::ordered_json::array();
  const TuneTrial& best = result.trials.front();
  for (std::size_t i = 0; i < result.trials.size(); ++i) {
    const TuneTrial& t = result.trials[i];
    nlohmann::ordered_json row;
    row["rank"] = or_null(t.ran && t.fits, i + 1);
    row["schedule"] = t.family;
    row["stages_per_rank"] = t.stages_per_rank;
    row["microbatches"] = t.microbatches;
    row["ran"] = t.ran;
    row["fits"] = t.fits;
    if (t.ran) {
      row["iteration_time"] = t.makespan;
      row["bubble_ratio"] = t.bubble;
      row["peak_memory"] = t.peak;
    }
    row["verdict"] = tune_verdict(t, best, request.memory_cap);
    if (is_auto_schedule(t.family) && t.ran) row["auto_origin"] = t.note;
    rows.push_back(std::move(row));
  }
  return json_text(j);
}

std::string tune_text(const TuneRequest& request, const TuneSources& sources, const TuneResult& result) {
  const std::string cap = request.memory_cap > 0 ? fmt::format("{:.4g}", request.memory_cap) : "none";
  const std::string counts =
      request.microbatches
          ? fmt::format("{} microbatches", request.microbatches)
          : fmt::format("global batch {} (every microbatch count that divides it)", request.global_batch);
  const char* unit = !sources.stage_spec.empty() ? "bytes per rank"
                     : request.global_batch      ? "samples of activation per rank"
                                                 : "microbatches of activation per rank";
  std::string out = fmt::format("# ppsched tune: {} ranks, {}, memory cap {} ({}), costs {}\n", request.ranks, counts,
                                cap, unit, sources.costs_file.empty() ? sources.cost : sources.costs_file);
  out += "# iteration time from the timed simulator; bubble = 1 - busy / (ranks x time); peak = activation memory\n";
  out += fmt::format("{:>4}  {:<22} {:<12} {:>12} {:>7} {:>9}  {}\n", "rank", "schedule", "shape", "iteration",
                     "bubble", "peak", "verdict");
  const TuneTrial& best = result.trials.front();
  for (std::size_t i = 0; i < result.trials.size(); ++i) {
    const TuneTrial& t = result.trials[i];
    const std::string pos = t.ran && t.fits ? std::to_string(i + 1) : "-";
    const std::string verdict = tune_verdict(t, best, request.memory_cap);
    if (t.ran)
      out += fmt::format("{:>4}  {:<22} {:<12} {:>12.6g} {:>6.1f}% {:>9.4g}  {}\n", pos, t.family, shape(t),
                         t.makespan, 100 * t.bubble, t.peak, verdict);
    else
      out += fmt::format("{:>4}  {:<22} {:<12} {:>12} {:>7} {:>9}  {}\n", pos, t.family, shape(t), "-", "-", "-",
                         verdict);
  }
  if (result.found() && is_auto_schedule(best.family)) out += "# auto's schedule came from: " + best.note + "\n";
  if (!result.found()) out += "# nothing fits the memory cap\n";
  return out;
}

}  // namespace ppsched
