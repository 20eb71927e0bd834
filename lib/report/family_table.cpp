#include "report/family_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "report/json_text.hpp"
#include "synth/synth.hpp"

namespace ppsched {

namespace {

std::string stages_per_rank(const Family& f) {
  return f.fixed_stages_per_rank ? std::to_string(f.default_stages_per_rank)
                                 : fmt::format("any (default {})", f.default_stages_per_rank);
}

// The computed peak for one family, or the reason it cannot be built.
struct Computed {
  std::optional<double> peak;
  std::string why_not;
};

Computed compute(const Family& f, const ListConfig& c) {
  SynthParams p;
  p.ranks = c.ranks;
  p.microbatches = c.microbatches;
  p.stages_per_rank = f.fixed_stages_per_rank ? 0 : c.stages_per_rank;
  try {
    return {peak_in_flight_microbatches(synthesize(f.name, p)), {}};
  } catch (const SynthError& e) {
    return {std::nullopt, e.what()};
  }
}

std::string number(double v) {
  std::string s = fmt::format("{:.2f}", v);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

double peak_in_flight_microbatches(const Schedule& s) {
  // Count in chunks (one stage's share of a microbatch) so the result is exact.
  const std::uint32_t chunks =
      s.rank_count() && s.num_stages >= s.rank_count() ? s.num_stages / static_cast<std::uint32_t>(s.rank_count()) : 1;
  std::int64_t peak = 0;
  for (const auto& rank : s.ranks) {
    std::int64_t live = 0;
    auto apply = [&](const Action& a) {
      if (a.kind == ActionKind::F) peak = std::max(peak, ++live);
      if (a.kind == ActionKind::B || a.kind == ActionKind::W) --live;
    };
    for (const Action& a : rank.actions) {
      if (a.is_container()) {
        for (const Action& sub : s.subs(a)) apply(sub);
      } else {
        apply(a);
      }
    }
  }
  return static_cast<double>(peak) / chunks;
}

std::string family_table_text(const std::optional<ListConfig>& config) {
  std::string out = fmt::format("{:<22} {:<9} {:<16} {:<38} {:<38}", "family", "placement", "stages per rank",
                                "peak memory (microbatches)", "bubble per stage");
  if (config)
    out += fmt::format(" peak at p={} m={}{}", config->ranks, config->microbatches,
                       config->stages_per_rank ? fmt::format(" v={}", config->stages_per_rank) : "");
  out += '\n';
  for (const Family& f : families()) {
    std::string line = fmt::format("{:<22} {:<9} {:<16} {:<38} {:<38}", f.name, placement_style_name(f.placement),
                                   stages_per_rank(f), f.peak_memory, f.bubble);
    if (config) {
      Computed c = compute(f, *config);
      line += ' ' + (c.peak ? number(*c.peak) : "cannot run: " + c.why_not);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + '\n';
  }
  out +=
      "\np = ranks, m = microbatches, v = stages per rank; T_F forward, T_I input-gradient "
      "backward,\nT_W weight-gradient backward, T_B = T_I + T_W. Names are case-insensitive; "
      "aliases: ";
  bool first = true;
  for (const Family& f : families()) {
    if (f.aliases.empty()) continue;
    out += fmt::format("{}{} ({})", first ? "" : ", ", f.aliases, f.name);
    first = false;
  }
  out += ".\nConstraints: ";
  first = true;
  for (const Family& f : families()) {
    if (f.requires_.empty()) continue;
    out += fmt::format("{}{} needs {}", first ? "" : "; ", f.name, f.requires_);
    first = false;
  }
  out += ".\n";
  if (config)
    out +=
        "Peak at p, m: most microbatches a rank holds at once (forward done, weight gradient "
        "pending),\ncomputed from the synthesized schedule.\n";
  return out;
}

std::string family_table_json(const std::optional<ListConfig>& config) {
  nlohmann::ordered_json doc;
  doc["schema_version"] = 1;
  if (config)
    doc["config"] = {
        {"ranks", config->ranks}, {"microbatches", config->microbatches}, {"stages_per_rank", config->stages_per_rank}};
  auto& list = doc["families"] = nlohmann::ordered_json::array();
  for (const Family& f : families()) {
    nlohmann::ordered_json j;
    j["name"] = f.name;
    nlohmann::ordered_json aliases = nlohmann::ordered_json::array();
    std::string_view a = f.aliases;
    while (!a.empty()) {
      auto space = a.find(' ');
      aliases.push_back(std::string(a.substr(0, space)));
      if (space == std::string_view::npos) break;
      a.remove_prefix(space + 1);
    }
    j["aliases"] = aliases;
    j["summary"] = f.summary;
    j["placement"] = placement_style_name(f.placement);
    j["stages_per_rank"] = f.default_stages_per_rank;
    j["stages_per_rank_fixed"] = f.fixed_stages_per_rank;
    j["peak_memory_microbatches"] = f.peak_memory;
    j["bubble_per_stage"] = f.bubble;
    j["source"] = f.source;
    j["requires"] = f.requires_;
    if (config) {
      Computed c = compute(f, *config);
      if (c.peak)
        j["peak_in_flight_microbatches"] = *c.peak;
      else
        j["cannot_run"] = c.why_not;
    }
    list.push_back(j);
  }
  return json_text(doc);
}

}  // namespace ppsched
