#include "report/run_report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "report/json_text.hpp"
#include "report/trace_view.hpp"

namespace ppsched {

namespace {

std::string mib(std::uint64_t bytes) { return fmt::format("{:.1f}", static_cast<double>(bytes) / (1 << 20)); }

// A per-device vector may be shorter than the devices used (a device no rank ran on).
std::uint64_t at_or_zero(const std::vector<std::uint64_t>& v, int ordinal) {
  return ordinal < static_cast<int>(v.size()) ? v[ordinal] : 0;
}

nlohmann::ordered_json stats_json(const run::SampleStats& s) {
  return {{"count", s.count}, {"p50_us", s.median}, {"p99_us", s.p99},     {"min_us", s.min},
          {"max_us", s.max},  {"avg_us", s.mean},   {"stdev_us", s.stdev}, {"cv_pct", s.cv_pct}};
}

nlohmann::ordered_json result_json(const run::RunResult& r) {
  nlohmann::ordered_json res;
  res["schedule"] = r.name;
  res["ranks"] = r.plan.device.device_of_rank.size();
  res["microbatches"] = r.microbatches;
  res["device_of_rank"] = r.plan.device.device_of_rank;
  res["warmup"] = r.measured.warmup;
  res["stop"] = run::stop_reason_name(r.measured.stop);
  res["iteration"] = stats_json(r.measured.iteration);
  res["times_us"] = r.measured.iteration_us;
  res["simulated_us"] = r.simulated_us;
  res["shared_compute"] = r.shared_compute;
  res["measured_over_simulated"] = r.ratio();
  res["host_us_per_launch"] = r.measured.host_us_per_launch;
  res["memory"] = {{"measured_peak_bytes", r.measured.memory.peak_buffer_bytes},
                   {"predicted_peak_bytes", r.predicted_peak},
                   {"fixed_bytes", r.measured.memory.fixed_bytes}};
  auto& actions = res["actions"] = nlohmann::ordered_json::array();
  for (const run::KindTiming& k : r.measured.kinds) {
    nlohmann::ordered_json a = {{"stage", k.stage}, {"kind", std::string(kind_name(k.kind))}};
    a.update(stats_json(k.stats));
    actions.push_back(std::move(a));
  }
  // Each kind alone on its device, where ranks shared one: what the cost table holds.
  if (!r.isolated.empty()) {
    auto& isolated = res["isolated_actions"] = nlohmann::ordered_json::array();
    for (const run::KindTiming& k : r.isolated) {
      nlohmann::ordered_json a = {{"stage", k.stage}, {"kind", std::string(kind_name(k.kind))}};
      a.update(stats_json(k.stats));
      isolated.push_back(std::move(a));
    }
  }
  return res;
}

// Who holds each memory figure: the devices of one process, or the processes of a multi-process
// run (one device each).
std::vector<std::pair<std::string, int>> memory_owners(const run::BenchmarkReport& rep) {
  std::vector<std::pair<std::string, int>> owners;
  if (rep.processes.empty())
    for (int o : rep.ordinals) owners.emplace_back(fmt::format("device {}", o), o);
  else
    for (const run::ProcessRow& p : rep.processes) owners.emplace_back(fmt::format("process {}", p.process), p.process);
  return owners;
}

std::string gb_per_s(double bytes_per_us) {
  return bytes_per_us > 0 ? fmt::format("{:.2f} GB/s", bytes_per_us / 1e3) : "bandwidth not measured";
}

// The multi-process part of the text report: the launcher, a row per process, the links.
std::string processes_text(const run::BenchmarkReport& rep) {
  if (rep.processes.empty()) return {};
  int nodes = 0;
  for (const run::ProcessRow& p : rep.processes) nodes = std::max(nodes, p.place.node + 1);
  std::string out = fmt::format("# launcher {}: {} processes on {} node{}; start-up {:.2f} s (slowest process)\n",
                                rep.launcher, rep.processes.size(), nodes, nodes == 1 ? "" : "s", rep.startup_s);
  for (const run::ProcessRow& p : rep.processes)
    out += fmt::format("# process {}: {}, host {} (node {}, local rank {}), device {} {}; discoveries {}, opens {}\n",
                       p.process, p.rank >= 0 ? fmt::format("rank {}", p.rank) : std::string("no rank"), p.place.host,
                       p.place.node, p.place.local_rank, p.ordinal, p.device, p.discoveries, p.opens);
  for (const run::MeasuredLink& l : rep.links)
    out += fmt::format("# link {} (processes {} and {}): {:.1f} us latency, {}\n", l.link, l.from, l.to, l.latency_us,
                       gb_per_s(l.bytes_per_us));
  return out;
}

nlohmann::ordered_json processes_json(const run::BenchmarkReport& rep) {
  nlohmann::ordered_json j;
  j["launcher"] = rep.launcher;
  j["startup_s"] = rep.startup_s;
  auto& rows = j["processes"] = nlohmann::ordered_json::array();
  for (const run::ProcessRow& p : rep.processes)
    rows.push_back({{"process", p.process},
                    {"rank", p.rank},
                    {"host", p.place.host},
                    {"node", p.place.node},
                    {"local_rank", p.place.local_rank},
                    {"ordinal", p.ordinal},
                    {"device", p.device},
                    {"discoveries", p.discoveries},
                    {"opens", p.opens}});
  auto& links = j["links"] = nlohmann::ordered_json::array();
  for (const run::MeasuredLink& l : rep.links)
    links.push_back({{"link", l.link},
                     {"from", l.from},
                     {"to", l.to},
                     {"latency_us", l.latency_us},
                     {"bytes_per_us", l.bytes_per_us}});
  return j;
}

}  // namespace

std::string run_report_text(const RunReportConfig& config, const run::BenchmarkReport& rep) {
  const run::Discovery& d = rep.discovery;
  const run::StopRule& stop = config.stop;
  std::string out = fmt::format("# ppsched {} run: backend {}, driver {}, runtime {}\n", config.version, d.backend,
                                d.driver_version, d.runtime_version);
  if (!d.settings.empty()) out += "# settings: " + d.settings + "\n";
  out += processes_text(rep);
  for (int o : rep.processes.empty() ? rep.ordinals : std::vector<int>{}) {
    const run::DeviceInfo& dev = d.devices.at(o);
    out += dev.total_memory_bytes ? fmt::format("# device {}: {}, {} MiB, {} SMs\n", o, dev.name,
                                                dev.total_memory_bytes >> 20, dev.sm_count)
                                  : fmt::format("# device {}: {}\n", o, dev.name);
  }
  if (config.workload == "gemm")
    out += fmt::format("# workload gemm: {} layers of {}x{}, {} tokens per microbatch, {}\n", config.shape.layers,
                       config.shape.hidden, config.shape.hidden, config.shape.tokens, config.dtype);
  else
    out += "# workload synthetic: each action spins for its cost (" + config.cost + ")\n";
  out +=
      fmt::format("# warm-up {}; stop: {}\n", config.warmup,
                  stop.max_iters ? fmt::format("{} iterations", stop.max_iters)
                                 : fmt::format(">= {} samples and {} s, then noise <= {}%, timeout {} s",
                                               stop.min_samples, stop.min_time_s, stop.max_noise_pct, stop.timeout_s));
  bool shared = false;
  for (const run::RunResult& r : rep.results) shared |= r.shared_compute;
  out += fmt::format("# sim_us: {}{}; times per iteration in microseconds; p99 by nearest rank\n",
                     config.sim_from_measured_costs
                         ? shared ? "the simulator with this run's cost table, each kind timed alone on its device"
                                  : "the simulator with this run's measured cost table"
                         : "the simulator with the given costs",
                     shared ? ", ranks that share a device taking turns on its compute" : "");
  out += fmt::format("#{:>19} {:>5} {:>4} {:>6} {:>6} {:>11} {:>11} {:>11} {:>11} {:>6} {:>11} {:>6}  {}\n", "schedule",
                     "ranks", "mbs", "warmup", "iters", "median_us", "p99_us", "min_us", "max_us", "cv%", "sim_us",
                     "ratio", "stop");
  for (const run::RunResult& r : rep.results) {
    const run::SampleStats& s = r.measured.iteration;
    out += fmt::format(
        " {:>19} {:>5} {:>4} {:>6} {:>6} {:>11.1f} {:>11.1f} {:>11.1f} {:>11.1f} {:>6.2f} {:>11.1f} {:>6.3f}  {}\n",
        r.name, r.plan.device.device_of_rank.size(), r.microbatches, r.measured.warmup, s.count, s.median, s.p99, s.min,
        s.max, s.cv_pct, r.simulated_us, r.ratio(), run::stop_reason_name(r.measured.stop));
  }
  out += fmt::format("# peak memory per {}, MiB: measured (buffers) / predicted (memory model) / fixed (weights)\n",
                     rep.processes.empty() ? "device" : "process");
  for (const run::RunResult& r : rep.results)
    for (const auto& [owner, o] : memory_owners(rep)) {
      const auto& m = r.measured.memory;
      out += fmt::format("#{:>19} {}: {} / {} / {}\n", r.name, owner, mib(at_or_zero(m.peak_buffer_bytes, o)),
                         mib(at_or_zero(r.predicted_peak, o)), mib(at_or_zero(m.fixed_bytes, o)));
    }
  out += "# host time to enqueue one launch, us (less waits on other processes; the slowest process):";
  for (const run::RunResult& r : rep.results) out += fmt::format(" {} {:.2f}", r.name, r.measured.host_us_per_launch);
  out += "\n";
  return out;
}

std::string run_report_json(const RunReportConfig& config, const run::BenchmarkReport& rep) {
  const run::StopRule& stop = config.stop;
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["config"] = {{"backend", config.backend},
                 {"workload", config.workload},
                 {"layers", config.shape.layers},
                 {"hidden", config.shape.hidden},
                 {"tokens", config.shape.tokens},
                 {"dtype", config.dtype},
                 {"warmup", config.warmup},
                 {"iters", stop.max_iters},
                 {"min_samples", stop.min_samples},
                 {"min_time_s", stop.min_time_s},
                 {"max_noise_pct", stop.max_noise_pct},
                 {"timeout_s", stop.timeout_s},
                 {"cost", config.cost},
                 {"costs_file", config.costs_file},
                 {"p99_method", "nearest-rank"}};
  j["env"] = {{"ppsched_version", config.version},
              {"driver_version", rep.discovery.driver_version},
              {"runtime_version", rep.discovery.runtime_version},
              {"settings", rep.discovery.settings}};
  auto& devs = j["devices"] = nlohmann::ordered_json::array();
  for (int o : rep.processes.empty() ? rep.ordinals : std::vector<int>{}) {
    const run::DeviceInfo& d = rep.discovery.devices.at(o);
    devs.push_back(
        {{"ordinal", o}, {"name", d.name}, {"total_memory_bytes", d.total_memory_bytes}, {"sm_count", d.sm_count}});
  }
  if (!rep.processes.empty()) j["multi_process"] = processes_json(rep);
  auto& results = j["results"] = nlohmann::ordered_json::array();
  for (const run::RunResult& r : rep.results) results.push_back(result_json(r));
  return json_text(j);
}

void write_measured_trace(const run::RunResult& result, const std::string& backend, ByteSink& out) {
  const Timeline t = run::measured_timeline(result.plan, result.measured);
  TraceOptions trace;
  trace.flows = TraceFlows::V1;  // measured launches have lengths to hold an arrow's ends
  trace.times_in_us = true;      // measured
  trace.label = "measured by ppsched run (" + backend + "), last timed iteration";
  trace.thread_prefix = "gpu ";  // "gpu compute", "gpu send", "gpu recv": measured device streams
  write_chrome_trace(result.schedule, t, nullptr, out, trace);
}

std::string no_gpu_message(const run::Discovery& discovery) {
  static constexpr const char* kWhy[] = {"ok", "built without CUDA", "no GPU driver", "no GPU device", "CUDA error"};
  return fmt::format("no usable GPU ({}): {}", kWhy[static_cast<int>(discovery.status)], discovery.message);
}

std::string ratio_bounds_problem(const run::BenchmarkReport& report, double min_ratio, double max_ratio) {
  for (const run::RunResult& r : report.results) {
    const double ratio = r.ratio();
    if ((min_ratio > 0 && ratio < min_ratio) || (max_ratio > 0 && ratio > max_ratio))
      return fmt::format("'{}': measured/simulated = {:.3f}, outside [{}, {}]", r.name, ratio, min_ratio,
                         max_ratio > 0 ? fmt::format("{}", max_ratio) : "inf");
  }
  return {};
}

}  // namespace ppsched
