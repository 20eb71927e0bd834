// The stage-costs view (sim_views.hpp): what each stage cost the simulator, and where a model file
// gave the costs, which of its layers each stage holds.
#include <fmt/format.h>

#include "diag/units.hpp"
#include "report/sim_views.hpp"

namespace ppsched {

namespace {

constexpr ActionKind kKinds[] = {ActionKind::F, ActionKind::I, ActionKind::W, ActionKind::B};

}  // namespace

std::string stage_costs_text(const StageCosts* c) {
  if (!c) return "stage costs: not known for this run\n";
  const bool bytes = !c->spec.empty(), layers = !c->layers.empty();
  std::string out =
      fmt::format("per-stage costs ({} per microbatch{})\n", c->times_in_us ? "us" : "cost units",
                  bytes ? "; bytes held: static for the step, M_B from F to its backward, M_W from I to W" : "");
  out += fmt::format("stage {}{:>12} {:>12} {:>12} {:>12}", layers ? fmt::format("{:<24}", " layers") : "", "F", "I",
                     "W", "B");
  if (bytes) out += fmt::format(" {:>11} {:>11} {:>11}", "static", "M_B", "M_W");
  out += "\n";
  for (std::uint32_t st = 0; st < c->stages; ++st) {
    const auto stage = static_cast<std::uint16_t>(st);
    out += fmt::format("{:>5} {}", st, layers ? fmt::format("{:<24}", st < c->layers.size() ? c->layers[st] : "") : "");
    for (ActionKind k : kKinds) out += fmt::format(" {:>12.6g}", c->costs.cost(stage, k));
    if (bytes && st < c->spec.size()) {
      const StageSpec& s = c->spec[st];
      out += fmt::format(" {:>11} {:>11} {:>11}", human_bytes(s.weight_bytes), human_bytes(s.activation_memory_bytes),
                         human_bytes(s.weight_grad_memory()));
    }
    out += "\n";
  }
  return out;
}

nlohmann::ordered_json stage_costs_json(const StageCosts* c) {
  nlohmann::ordered_json j;
  if (!c) return j;
  j["time_unit"] = c->times_in_us ? "us" : "cost units";
  auto& stages = j["stages"] = nlohmann::ordered_json::array();
  for (std::uint32_t st = 0; st < c->stages; ++st) {
    const auto stage = static_cast<std::uint16_t>(st);
    nlohmann::ordered_json row{{"stage", st}};
    if (st < c->layers.size()) row["layers"] = c->layers[st];
    for (ActionKind k : kKinds) row[std::string(kind_name(k))] = c->costs.cost(stage, k);
    if (st < c->spec.size()) {
      const StageSpec& s = c->spec[st];
      row["static_bytes"] = s.weight_bytes;
      row["activation_memory_bytes"] = s.activation_memory_bytes;
      row["weight_grad_memory_bytes"] = s.weight_grad_memory();
    }
    stages.push_back(std::move(row));
  }
  return j;
}

}  // namespace ppsched
