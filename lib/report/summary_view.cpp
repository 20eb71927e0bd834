// The summary view (sim_views.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "io/log_text.hpp"
#include "ir/action_text.hpp"
#include "report/sim_views.hpp"

namespace ppsched {

namespace {

// JSON numbers must be finite; timelines are, but guard the ratios of empty schedules.
double finite(double v) { return std::isfinite(v) ? v : 0.0; }

}  // namespace

std::string summary_text(const SimAnalysis& a, const SimReportOptions& opt) {
  std::string out = opt.time_model.empty() ? "" : "time model         " + printable(opt.time_model) + "\n";
  out += fmt::format("makespan           {:g}\n", a.makespan);
  out += fmt::format("iteration time     {:g} ({})\n", iteration_time(a, opt.optimizer),
                     opt.optimizer == Optimizer::Sync ? "optimizer sync: the makespan"
                                                      : "optimizer post-validated: the longest rank span");
  out += fmt::format("bubble ratio       {:.2f}% global (1 - compute / (ranks x makespan))\n", 100 * a.bubble_global);
  out += fmt::format(
      "                   {:.2f}% per stage (Zero Bubble paper: (max stage span - its compute) / max span)\n",
      100 * a.bubble_per_stage);
  std::size_t peak_rank = 0;
  for (std::size_t r = 0; r < a.memory.peak.size(); ++r)
    if (a.memory.peak[r] > a.memory.peak[peak_rank]) peak_rank = r;
  if (!a.memory.peak.empty())
    out += fmt::format("peak memory        {} (rank {} at t={:g}){}\n",
                       memory_amount(a.memory.peak[peak_rank], a.memory.in_bytes), peak_rank,
                       a.memory.peak_time[peak_rank],
                       !fits_under_cap(a.memory.peak[peak_rank], opt.memory_cap)
                           ? "  EXCEEDS the cap of " + memory_amount(opt.memory_cap, a.memory.in_bytes)
                           : "");
  out += "\nrank     busy     idle   busy%\n";
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    const RankUsage& u = a.ranks[r];
    out += fmt::format("{:>4} {:>8g} {:>8g} {:>6.1f}%\n", r, u.busy, a.makespan - u.busy,
                       a.makespan > 0 ? 100 * u.busy / a.makespan : 0.0);
  }
  return out;
}

nlohmann::ordered_json summary_json(const SimAnalysis& a, const SimReportOptions& opt) {
  nlohmann::ordered_json j;
  j["makespan"] = finite(a.makespan);
  j["iteration_time"] = finite(iteration_time(a, opt.optimizer));
  j["optimizer"] = optimizer_name(opt.optimizer);
  j["bubble_ratio_global"] = finite(a.bubble_global);
  j["bubble_ratio_per_stage"] = finite(a.bubble_per_stage);
  j["bubble_definitions"] = {{"global", "1 - total compute time / (ranks x makespan)"},
                             {"per_stage",
                              "Zero Bubble paper: max over ranks of (span - compute) / max span; span = last compute "
                              "end - first compute start"}};
  j["peak_memory"] = finite(a.memory.max_peak());
  j["memory_unit"] = a.memory.in_bytes ? "bytes" : "microbatches";
  if (opt.memory_cap > 0) {
    j["memory_cap"] = opt.memory_cap;
    j["memory_cap_exceeded"] = !fits_under_cap(a.memory.max_peak(), opt.memory_cap);
  }
  auto& ranks = j["ranks"] = nlohmann::ordered_json::array();
  for (const RankUsage& u : a.ranks) ranks.push_back({{"busy", finite(u.busy)}, {"idle", finite(a.makespan - u.busy)}});
  return j;
}

}  // namespace ppsched
