#include "report/simulate_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "io/input_file.hpp"
#include "ir/action_text.hpp"
#include "report/ascii_gantt.hpp"
#include "report/json_text.hpp"
#include "report/steps_view.hpp"

namespace ppsched {

namespace {

bool wants(const SimulateReport& r, std::string_view view) {
  return std::find(r.views.begin(), r.views.end(), view) != r.views.end();
}

nlohmann::ordered_json input_json(const SimulateSource& src) {
  nlohmann::ordered_json in;
  if (!src.schedule.empty()) {
    in["schedule"] = src.schedule;
    in["ranks"] = src.ranks;
    in["microbatches"] = src.microbatches;
    if (src.stages_per_rank) in["stages_per_rank"] = src.stages_per_rank;
  } else {
    in["file"] = src.file;
  }
  in["lower"] = src.lower;
  return in;
}

nlohmann::ordered_json parameters_json(const SimulateParameters& p) {
  nlohmann::ordered_json j = {{"model", "timed"},
                              {"runtime", p.runtime},
                              {"optimizer", optimizer_name(p.optimizer)},
                              {"runtime_params", p.runtime_params},
                              {"time_model", p.time_model},
                              {"blocking_comms", p.blocking_comms},
                              {"overlap_factor", p.overlap_factor},
                              {"cost", p.cost},
                              {"costs_file", p.costs_file},
                              {"topology", p.topology},
                              {"stage_spec", p.stage_spec},
                              {"model_file", p.model_file},
                              {"gpu", p.gpu}};
  if (p.send.eager()) j["send_mode"] = send_mode_name(p.send);
  if (p.p2p_queues != P2pQueues::PerRank) j["p2p_queues"] = p2p_queues_name(p.p2p_queues);
  return j;
}

}  // namespace

bool simulate_report_needs_timeline(const SimulateReport& report, bool json) {
  if (report.gantt_width > 0) return true;  // in either format, as simulate has always built it
  for (const SimView& v : sim_views())
    if (wants(report, v.name) && (json ? v.json_needs_timeline : v.text_needs_timeline)) return true;
  return false;
}

std::string simulate_text(const SimulateReport& report, const SimViewInput& in) {
  std::string text;  // the chosen views, in this order, a blank line apart
  auto add = [&](const std::string& view) { text += (text.empty() ? "" : "\n") + view; };
  for (const SimView& v : sim_views())
    if (wants(report, v.name)) add(v.text(in));
  if (report.liveness) add(liveness_text(*report.liveness));
  if (report.gantt_width) {
    AsciiOptions g;
    g.width = report.gantt_width;
    text += '\n';
    text += ascii_gantt(in.schedule, in.timeline, g);
  }
  return text;
}

std::string simulate_json(const SimulateReport& report, const SimViewInput& in) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["input"] = input_json(report.source);
  j["parameters"] = parameters_json(report.parameters);
  std::vector<const SimView*> in_json_order(sim_views().size());
  for (const SimView& v : sim_views()) in_json_order.at(v.json_position) = &v;
  for (const SimView* v : in_json_order)
    if (wants(report, v->name)) j[std::string(v->json_key)] = v->json(in);
  if (report.liveness) j["activation_liveness"] = liveness_json(*report.liveness);
  return json_text(j);
}

std::string pytorch_steps_json(const SimulateSource& source, const Schedule& timeline) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["input"] = input_json(source);
  j["parameters"] = {{"model", "pytorch-steps"}};
  add_steps_json(timeline, j);
  return json_text(j);
}

std::string timed_deadlock_text(const TimedDeadlock& d, const Schedule& s) {
  std::string msg = "the schedule deadlocks: no remaining action can start";
  for (const auto& st : d.stuck())
    msg += "\nnote: rank " + std::to_string(st.rank) + " is stuck at its step " + std::to_string(st.step) + " (" +
           action_text(s.ranks[st.rank].actions[st.step], s.sub_actions) + "), waiting for " + st.waiting_for;
  return msg;
}

std::string simulate_title(const SimulateSource& source) {
  return "ppsched simulate: " + (source.schedule.empty() ? display_name(source.file)
                                                         : fmt::format("{}, {} ranks, {} microbatches", source.schedule,
                                                                       source.ranks, source.microbatches));
}

}  // namespace ppsched
