// The memory view (sim_views.hpp).
#include <fmt/format.h>

#include "diag/units.hpp"
#include "report/sim_views.hpp"

namespace ppsched {

std::string memory_amount(double value, bool in_bytes) {
  return in_bytes ? human_bytes(value) : fmt::format("{:g} microbatches", value);
}

std::string memory_text(const SimAnalysis& a, const SimReportOptions& opt) {
  const auto& m = a.memory;
  std::string out = fmt::format("peak activation memory per rank ({})\nrank      peak    at time\n",
                                m.in_bytes ? "bytes" : "microbatches");
  for (std::size_t r = 0; r < m.peak.size(); ++r)
    out +=
        fmt::format("{:>4} {:>9} {:>10g}{}\n", r, m.in_bytes ? human_bytes(m.peak[r]) : fmt::format("{:g}", m.peak[r]),
                    m.peak_time[r], !fits_under_cap(m.peak[r], opt.memory_cap) ? "  over the cap" : "");
  return out;
}

nlohmann::ordered_json memory_json(const SimAnalysis& a, const SimReportOptions& opt) {
  nlohmann::ordered_json j;
  j["unit"] = a.memory.in_bytes ? "bytes" : "microbatches";
  auto& ranks = j["ranks"] = nlohmann::ordered_json::array();
  for (std::size_t r = 0; r < a.memory.peak.size(); ++r) {
    nlohmann::ordered_json rank{{"peak", a.memory.peak[r]}, {"peak_time", a.memory.peak_time[r]}};
    if (opt.memory_cap > 0) rank["over_cap"] = !fits_under_cap(a.memory.peak[r], opt.memory_cap);
    ranks.push_back(std::move(rank));
  }
  return j;
}

std::string memory_timeline_text(const SimAnalysis& a) {
  std::string out = fmt::format("memory over time per rank ({}): time value, at each change\n",
                                a.memory.in_bytes ? "bytes" : "microbatches");
  for (std::size_t r = 0; r < a.memory.per_rank.size(); ++r) {
    out += fmt::format("{:>4}", r);
    for (const MemoryPoint& p : a.memory.per_rank[r]) out += fmt::format("  {:g} {:g}", p.time, p.value);
    out += "\n";
  }
  return out;
}

nlohmann::ordered_json memory_timeline_json(const SimAnalysis& a) {
  nlohmann::ordered_json j;
  j["unit"] = a.memory.in_bytes ? "bytes" : "microbatches";
  auto& ranks = j["ranks"] = nlohmann::ordered_json::array();
  for (const auto& points : a.memory.per_rank) {
    auto pts = nlohmann::ordered_json::array();
    for (const MemoryPoint& p : points) pts.push_back({p.time, p.value});
    ranks.push_back(std::move(pts));
  }
  return j;
}

}  // namespace ppsched
