#include "parse/stage_count.hpp"

#include <nlohmann/json.hpp>

#include "io/input_file.hpp"
#include "model/cost_coverage.hpp"
#include "model/costs.hpp"
#include "parse/cost_table.hpp"

namespace ppsched {

std::optional<std::uint32_t> cost_table_stage_count(const std::string& path, DiagnosticSink& sink) {
  // Read into a model of every stage an action can name; the coverage the reader records ends at
  // the highest stage with a row.
  CostModel probe;
  probe.per_stage.resize(65535);
  CostCoverage given;
  if (!read_cost_file(path, probe, sink, &given)) return std::nullopt;
  return static_cast<std::uint32_t>(given.given.size());
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
