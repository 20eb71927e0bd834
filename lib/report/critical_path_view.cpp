// The critical path view (sim_views.hpp): from the action that ends last, follow what released
// each action back to time 0.
#include <fmt/format.h>

#include <algorithm>

#include "ir/action_text.hpp"
#include "report/sim_views.hpp"

namespace ppsched {

namespace {

std::vector<std::uint32_t> path(const Timeline& t) {
  std::vector<std::uint32_t> out;
  if (t.size() == 0) return out;
  std::uint32_t e = 0;
  for (std::uint32_t i = 1; i < t.size(); ++i)
    if (t.end[i] > t.end[e]) e = i;
  for (std::size_t guard = 0; e != Timeline::kNone && guard <= t.size(); ++guard) {
    out.push_back(e);
    e = t.released_by[e];
  }
  return out;
}

const char* edge_kind(const Timeline& t, std::uint32_t from, std::uint32_t to) {
  if (!t.device_turn.empty() && t.device_turn[to]) return "shared GPU";
  if (t.rank_of(from) != t.rank_of(to)) return "transfer";
  if (t.stream[from] == t.stream[to]) return "stream order";
  return "dependency";
}

}  // namespace

std::string critical_path_text(const Schedule& s, const Timeline& t, std::size_t max_lines) {
  auto p = path(t);
  std::string out = fmt::format("critical path: {} actions, makespan {:g} (last first)\n", p.size(), t.makespan);
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (i == max_lines && p.size() > max_lines + 1) {
      out += fmt::format("  ... {} more\n", p.size() - i);
      break;
    }
    std::uint32_t e = p[i];
    std::uint32_t r = t.rank_of(e);
    out += fmt::format("  {:>10g} {:>10g}  rank {:<3} {:<8} {}{}\n", t.start[e], t.end[e], r, stream_name(t.stream[e]),
                       action_text(s.ranks[r].actions[t.step[e]], s.sub_actions),
                       i + 1 < p.size() ? fmt::format("  <- {}", edge_kind(t, p[i + 1], e)) : std::string());
  }
  return out;
}

nlohmann::ordered_json critical_path_json(const Schedule& s, const Timeline& t) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  auto p = path(t);
  std::reverse(p.begin(), p.end());
  for (std::size_t i = 0; i < p.size(); ++i) {
    std::uint32_t e = p[i];
    std::uint32_t r = t.rank_of(e);
    nlohmann::ordered_json step{{"rank", r},
                                {"stream", stream_name(t.stream[e])},
                                {"action", action_text(s.ranks[r].actions[t.step[e]], s.sub_actions)},
                                {"start", t.start[e]},
                                {"end", t.end[e]}};
    if (i > 0) step["released_by"] = edge_kind(t, p[i - 1], e);
    j.push_back(std::move(step));
  }
  return j;
}

}  // namespace ppsched
