#include "report/steps_view.hpp"

#include <algorithm>

#include "ir/action_text.hpp"
#include "report/pipeline_grid.hpp"

namespace ppsched {

std::size_t lock_step_count(const Schedule& timeline) {
  std::size_t steps = 0;
  for (const auto& r : timeline.ranks) steps = std::max(steps, r.actions.size());
  return steps;
}

void write_steps_text(const Schedule& timeline, ByteSink& out) {
  write_pipeline_grid(timeline, out);
  out.write("steps: " + std::to_string(lock_step_count(timeline)) +
            " (PyTorch's _simulate_comms_compute: one step per action, an empty cell where a rank waits)\n");
}

std::string steps_text(const Schedule& timeline) {
  std::string out;
  StringSink sink(out);
  write_steps_text(timeline, sink);
  return out;
}

void add_steps_json(const Schedule& timeline, nlohmann::ordered_json& doc) {
  doc["steps"] = lock_step_count(timeline);
  auto& ranks = doc["timeline"] = nlohmann::ordered_json::array();
  for (const auto& r : timeline.ranks) {
    nlohmann::ordered_json row = nlohmann::ordered_json::array();
    for (const Action& a : r.actions)
      row.push_back(a.is_idle() ? nlohmann::ordered_json()
                                : nlohmann::ordered_json(action_text(a, timeline.sub_actions)));
    ranks.push_back(std::move(row));
  }
}

std::string steps_deadlock_text(const SimDeadlock& d, const Schedule& s) {
  std::string msg = "the schedule deadlocks: Schedule is not progressing (PyTorch's verdict)\n\nWIP comms schedule:\n" +
                    format_pipeline_grid(d.partial());
  for (const auto& st : d.stuck())
    msg += "note: rank " + std::to_string(st.rank) +
           " next action = " + action_text(s.ranks[st.rank].actions[st.step], s.sub_actions) + "\n";
  return msg;
}

}  // namespace ppsched
