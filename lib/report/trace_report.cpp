#include "report/trace_report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "io/log_text.hpp"
#include "ir/action_text.hpp"
#include "parse/cost_table.hpp"
#include "report/html_report.hpp"
#include "report/json_text.hpp"
#include "sim/memory.hpp"

namespace ppsched {

namespace {

// A plain action's text (deviations and costs hold no container).
std::string text_of(const Action& a) { return action_text(a, SubActionTable{}); }

double simulated_idle(const RankUsage& u, double iteration) { return iteration - u.busy; }

}  // namespace

std::string trace_text(const TraceAnalysis& m, const TraceComparison& c, std::string_view runtime) {
  std::string out = fmt::format("# ppsched trace: {} ranks, {} profiled step{} (", m.ranks.size(), m.steps.size(),
                                m.steps.size() == 1 ? "" : "s");
  for (std::size_t i = 0; i < m.steps.size(); ++i) out += fmt::format("{}ProfilerStep#{}", i ? ", " : "", m.steps[i]);
  out += fmt::format("); clocks aligned on {} SEND/RECV pairs\n", m.pairs.size());
  for (const MeasuredRank& r : m.ranks) out += fmt::format("# rank {}: {}\n", r.rank, printable(r.file));
  out += "clock offsets (us, against rank 0):";
  for (std::size_t r = 1; r < m.clock_offset_us.size(); ++r)
    out += fmt::format(" rank {} {:+.3f}", r, m.clock_offset_us[r]);
  out += "\n";
  const double sim = c.simulated_iteration_us, meas = m.median_iteration_us;
  out += fmt::format("measured iteration   {:.3f} ms (median over the steps:", meas / 1e3);
  for (double t : m.iteration_us) out += fmt::format(" {:.3f}", t / 1e3);
  out += ")\n";
  out += fmt::format(
      "simulated iteration  {:.3f} ms ({:+.2f}%), the order as run with the measured costs under --runtime {}\n",
      sim / 1e3, 100 * (sim / meas - 1), runtime);
  out += fmt::format("p2p queues           {}, {}\n", p2p_queues_name(c.p2p_queues), c.p2p_queues_basis);
  out += m.same_order_every_step ? "order                the same in every step\n"
                                 : "order                differs between steps: the first step's is used\n";
  out += "\ncosts (us: the median over microbatches and steps of each action's kernels, and their spread)\n";
  out += fmt::format("{:>5} {:<4} {:>12} {:>12} {:>12} {:>7}\n", "stage", "kind", "median", "min", "max", "samples");
  for (const MeasuredCost& k : m.costs)
    out += fmt::format("{:>5} {:<4} {:>12.3f} {:>12.3f} {:>12.3f} {:>7}\n", k.stage, kind_name(k.kind), k.median_us,
                       k.min_us, k.max_us, k.samples);
  if (!m.hops.empty()) {
    out += "\ntransfers (us, the median from the later call to the pair's end)\n";
    for (const MeasuredHop& h : m.hops)
      out += fmt::format("  rank {} -> rank {}: {:.3f} ({} pairs)\n", h.from, h.to, h.median_us, h.samples);
  }
  out += "\nper rank, us per step: busy, and idle by cause; the simulated run's idle beside it\n";
  out += fmt::format("{:>4} {:>12} {:>12} {:>12} {:>12} {:>12} {:>14}\n", "rank", "busy", "warm/cool", "recv wait",
                     "launch gap", "other", "sim idle");
  for (std::size_t r = 0; r < m.idle.size(); ++r) {
    const RankIdle& i = m.idle[r];
    const double sim_idle = r < c.simulated.ranks.size() ? simulated_idle(c.simulated.ranks[r], sim) : 0;
    out += fmt::format("{:>4} {:>12.1f} {:>12.1f} {:>12.1f} {:>12.1f} {:>12.1f} {:>14.1f}\n", r, i.busy_us,
                       i.warmup_cooldown_us, i.receive_wait_us, i.launch_gap_us, i.other_us, sim_idle);
  }
  if (!m.deviations.empty()) {
    out += "\nlargest deviations from their stage and kind's median\n";
    for (const Deviation& d : m.deviations)
      out += fmt::format("  rank {} step {} {}: {:.3f} us against {:.3f} ({:+.1f}%)\n", d.rank, m.steps[d.step],
                         text_of(d.action), d.measured_us, d.median_us, 100 * (d.measured_us / d.median_us - 1));
  }
  return out;
}

std::string trace_json(const TraceAnalysis& m, const TraceComparison& c, std::string_view runtime) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const MeasuredRank& r : m.ranks) files.push_back({{"rank", r.rank}, {"file", r.file}});
  j["input"] = {{"ranks", m.ranks.size()}, {"files", files}, {"steps", m.steps}};
  j["measured_iteration_us"] = m.median_iteration_us;
  j["simulated_iteration_us"] = c.simulated_iteration_us;
  j["runtime"] = runtime;
  j["p2p_queues"] = {{"queues", p2p_queues_name(c.p2p_queues)}, {"basis", c.p2p_queues_basis}};
  j["iteration_us_per_step"] = m.iteration_us;
  j["clock_offset_us"] = m.clock_offset_us;
  j["aligning_pairs"] = m.pairs.size();
  j["same_order_every_step"] = m.same_order_every_step;
  auto& costs = j["costs"] = nlohmann::ordered_json::array();
  for (const MeasuredCost& k : m.costs)
    costs.push_back({{"stage", k.stage},
                     {"kind", kind_name(k.kind)},
                     {"median_us", k.median_us},
                     {"min_us", k.min_us},
                     {"max_us", k.max_us},
                     {"samples", k.samples}});
  auto& hops = j["transfers"] = nlohmann::ordered_json::array();
  for (const MeasuredHop& h : m.hops)
    hops.push_back({{"from", h.from}, {"to", h.to}, {"median_us", h.median_us}, {"samples", h.samples}});
  auto& ranks = j["ranks"] = nlohmann::ordered_json::array();
  for (std::size_t r = 0; r < m.idle.size(); ++r) {
    const RankIdle& i = m.idle[r];
    const double sim_idle =
        r < c.simulated.ranks.size() ? simulated_idle(c.simulated.ranks[r], c.simulated_iteration_us) : 0;
    ranks.push_back({{"rank", r},
                     {"busy_us", i.busy_us},
                     {"warmup_cooldown_us", i.warmup_cooldown_us},
                     {"receive_wait_us", i.receive_wait_us},
                     {"launch_gap_us", i.launch_gap_us},
                     {"other_us", i.other_us},
                     {"simulated_idle_us", sim_idle}});
  }
  auto& order = j["order"] = nlohmann::ordered_json::array();
  for (const RankProgram& p : m.executed.ranks) {
    nlohmann::ordered_json row = nlohmann::ordered_json::array();
    for (const Action& a : p.actions) row.push_back(action_text(a, m.executed.sub_actions));
    order.push_back(std::move(row));
  }
  auto& dev = j["deviations"] = nlohmann::ordered_json::array();
  for (const Deviation& d : m.deviations)
    dev.push_back({{"rank", d.rank},
                   {"step", m.steps[d.step]},
                   {"action", text_of(d.action)},
                   {"measured_us", d.measured_us},
                   {"median_us", d.median_us}});
  return json_text(j);
}

std::string measured_costs_csv(const TraceAnalysis& m) {
  std::vector<CostRow> rows;
  for (const MeasuredCost& k : m.costs) rows.push_back({k.stage, k.kind, k.median_us});
  return cost_table_csv(rows);
}

std::string merged_trace_json(const TraceAnalysis& m) {
  // Written by hand, one event a line: a merged trace of many ranks is large, and nlohmann's
  // tree would hold it twice.
  std::string out = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  bool first = true;
  auto event = [&](const std::string& e) {
    out += first ? "  " : ",\n  ";
    out += e;
    first = false;
  };
  for (const MeasuredRank& r : m.ranks) {
    event(fmt::format(R"({{"ph": "M", "pid": {}, "name": "process_name", "args": {{"name": "rank {}"}}}})", r.rank,
                      r.rank));
    event(
        fmt::format(R"({{"ph": "M", "pid": {}, "tid": 0, "name": "thread_name", "args": {{"name": "GPU"}}}})", r.rank));
    event(fmt::format(R"({{"ph": "M", "pid": {}, "tid": 1, "name": "thread_name", "args": {{"name": "host"}}}})",
                      r.rank));
    const double off = m.clock_offset_us[r.rank];
    for (const MeasuredAction& a : r.actions) {
      const std::string name = "PP:" + action_text(a.action, r.sub_actions);
      event(fmt::format(R"({{"ph": "X", "pid": {}, "tid": 1, "name": "{}", "ts": {:.3f}, "dur": {:.3f}}})", r.rank,
                        name, a.cpu_start - off, a.cpu_end - a.cpu_start));
      if (a.has_gpu)
        event(fmt::format(
            R"({{"ph": "X", "pid": {}, "tid": 0, "name": "{}", "ts": {:.3f}, "dur": {:.3f}, "args": {{"busy_us": {:.3f}}}}})",
            r.rank, name, a.gpu_start - off, a.gpu_end - a.gpu_start, a.gpu_busy));
    }
  }
  std::size_t id = 0;
  for (const MeasuredPair& p : m.pairs) {
    const MeasuredAction& s = m.ranks[p.send_rank].actions[p.send];
    const MeasuredAction& r = m.ranks[p.recv_rank].actions[p.recv];
    ++id;
    event(fmt::format(R"({{"ph": "s", "id": {}, "pid": {}, "tid": 0, "name": "p2p", "cat": "p2p", "ts": {:.3f}}})", id,
                      p.send_rank, s.gpu_start - m.clock_offset_us[p.send_rank]));
    event(fmt::format(
        R"({{"ph": "f", "bp": "e", "id": {}, "pid": {}, "tid": 0, "name": "p2p", "cat": "p2p", "ts": {:.3f}}})", id,
        p.recv_rank, r.gpu_end - m.clock_offset_us[p.recv_rank]));
  }
  out += "\n]}\n";
  return out;
}

void write_trace_html(const TraceAnalysis& m, const TraceComparison& c, std::string_view runtime, ByteSink& out) {
  const SimAnalysis a = analyze(m.executed, m.first_step, MemoryModel{});
  SimReportOptions options;
  options.time_model = fmt::format(
      "measured: PyTorch profiler traces of {} ranks, ProfilerStep#{} on rank 0's clock ({} SEND/RECV pairs); the "
      "simulator gives {:.3f} ms for the same order and costs under --runtime {} with {} p2p queues ({:+.2f}% "
      "against the measured median, {:.3f} ms)",
      m.ranks.size(), m.steps.front(), m.pairs.size(), c.simulated_iteration_us / 1e3, runtime,
      p2p_queues_name(c.p2p_queues), 100 * (c.simulated_iteration_us / m.median_iteration_us - 1),
      m.median_iteration_us / 1e3);
  const HtmlReportInput in{m.executed, m.first_step, a, options, "ppsched trace: the run as measured", "us"};
  write_html_report(in, out);
}

}  // namespace ppsched
