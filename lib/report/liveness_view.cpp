#include "report/liveness_view.hpp"

#include <fmt/format.h>

namespace ppsched {

namespace {

std::string row(const ActivationLiveness& l) {
  std::string out = fmt::format("{:<17} {:>5}", liveness_granularity_name(l.granularity), l.peak);
  for (std::uint32_t s : l.slots_per_rank) out += fmt::format(" {:>6}", s);
  return out + "\n";
}

nlohmann::ordered_json one(const ActivationLiveness& l) {
  return {{"peak_slots", l.peak}, {"slots_per_rank", l.slots_per_rank}};
}

}  // namespace

LivenessReport liveness_report(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                               LivenessGranularity capped, double cap) {
  LivenessReport r;
  const std::uint32_t mbs = stated_microbatches(s);
  r.stage_microbatch = activation_liveness(s, stage_to_rank, mbs, LivenessGranularity::StageMicrobatch);
  r.microbatch = activation_liveness(s, stage_to_rank, mbs, LivenessGranularity::Microbatch);
  r.capped = capped;
  r.cap = cap;
  return r;
}

std::string liveness_error_text(const LivenessError& e) {
  return "PyTorch's activation liveness cannot analyse rank " + std::to_string(e.rank()) + "'s order: " + e.what();
}

std::string liveness_text(const LivenessReport& r) {
  std::string out = "activation liveness (PyTorch's analyze_pipeline_activation_liveness), slots per rank\n";
  out += fmt::format("{:<17} {:>5}", "granularity", "peak");
  for (std::size_t i = 0; i < r.stage_microbatch.slots_per_rank.size(); ++i)
    out += fmt::format(" {:>6}", fmt::format("rank {}", i));
  out += '\n';
  out += row(r.stage_microbatch);
  out += row(r.microbatch);
  if (r.cap > 0)
    out += fmt::format("cap {} slots ({}): peak {} {}\n", r.cap, liveness_granularity_name(r.capped), r.capped_peak(),
                       r.capped_peak() <= r.cap ? "fits" : "is over it");
  return out;
}

nlohmann::ordered_json liveness_json(const LivenessReport& r) {
  nlohmann::ordered_json j;
  j["stage_microbatch"] = one(r.stage_microbatch);
  j["microbatch"] = one(r.microbatch);
  if (r.cap > 0) {
    j["cap_slots"] = r.cap;
    j["cap_granularity"] = std::string(liveness_granularity_name(r.capped));
    j["fits"] = r.capped_peak() <= r.cap;
  }
  return j;
}

}  // namespace ppsched
