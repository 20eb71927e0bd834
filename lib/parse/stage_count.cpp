#include "parse/stage_count.hpp"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "io/input_file.hpp"
#include "model/costs.hpp"
#include "parse/cost_table.hpp"

namespace ppsched {

std::optional<std::uint32_t> cost_table_stage_count(const std::string& path, DiagnosticSink& sink) {
  // Read into a model of every stage an action can name, each cost unset (NaN): the stages the
  // table sets are the ones with a number.
  CostModel probe;
  KindCosts unset;
  unset.fill(std::numeric_limits<double>::quiet_NaN());
  probe.per_stage.assign(65535, unset);
  if (!read_cost_file(path, probe, sink)) return std::nullopt;
  std::uint32_t count = 0;
  for (std::uint32_t s = 0; s < probe.per_stage.size(); ++s)
    for (double c : probe.per_stage[s])
      if (!std::isnan(c)) count = s + 1;
  return count;
}

std::optional<std::uint32_t> stage_spec_stage_count(const std::string& path) {
  std::string text;
  try {
    text = read_whole_input(path);
  } catch (const std::exception&) {  // the reader reports it, with the place
    return std::nullopt;
  }
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (!doc.is_object() || !doc.contains("stages") || !doc["stages"].is_array()) return std::nullopt;
  return static_cast<std::uint32_t>(doc["stages"].size());
}

}  // namespace ppsched
