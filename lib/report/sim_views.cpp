// The table of simulate's views (sim_views.hpp).
#include "report/sim_views.hpp"

namespace ppsched {

namespace {

constexpr SimView kViews[] = {
    {"summary", "summary", [](const SimViewInput& in) { return summary_text(in.analysis, in.options); },
     [](const SimViewInput& in) { return summary_json(in.analysis, in.options); }, false, false, false, 0},
    {"bubbles", "bubbles", [](const SimViewInput& in) { return bubbles_text(in.analysis); },
     [](const SimViewInput& in) { return bubbles_json(in.analysis); }, false, false, false, 1},
    {"memory", "memory", [](const SimViewInput& in) { return memory_text(in.analysis, in.options); },
     [](const SimViewInput& in) { return memory_json(in.analysis, in.options); }, false, false, false, 3},
    {"critical-path", "critical_path",
     [](const SimViewInput& in) { return critical_path_text(in.schedule, in.timeline); },
     [](const SimViewInput& in) { return critical_path_json(in.schedule, in.timeline); }, true, true, true, 2},
    {"memory-timeline", "memory_timeline", [](const SimViewInput& in) { return memory_timeline_text(in.analysis); },
     [](const SimViewInput& in) { return memory_timeline_json(in.analysis); }, true, true, true, 4},
    {"stage-costs", "stage_costs", [](const SimViewInput& in) { return stage_costs_text(in.stage_costs); },
     [](const SimViewInput& in) { return stage_costs_json(in.stage_costs); }, false, false, false, 5, true},
};

}  // namespace

std::span<const SimView> sim_views() { return kViews; }

std::vector<std::string> default_sim_views(bool json) {
  std::vector<std::string> names;
  for (const SimView& v : kViews)
    if (!v.on_request && (json ? !v.per_action : v.name != "memory-timeline")) names.emplace_back(v.name);
  return names;
}

std::vector<std::string> sim_view_names() {
  std::vector<std::string> names;
  for (const SimView& v : kViews) names.emplace_back(v.name);
  return names;
}

}  // namespace ppsched
