#include "run/benchmark.hpp"

#include <algorithm>
#include <stdexcept>

#include "ir/user_error.hpp"

namespace ppsched::run {

namespace {

// The devices a run uses: those named, else every visible one.
std::vector<int> devices_to_use(std::size_t visible, const std::vector<int>& ordinals) {
  std::vector<int> use = ordinals;
  if (use.empty())
    for (std::size_t i = 0; i < visible; ++i) use.push_back(static_cast<int>(i));
  return use;
}

// Iterations of the isolated pass, the first untimed: the medians settle within a few.
constexpr std::size_t kIsolatedIterations = 4;

}  // namespace

std::vector<int> map_ranks_to_devices(std::uint32_t ranks, std::size_t visible, const std::vector<int>& ordinals) {
  const std::vector<int> use = devices_to_use(visible, ordinals);
  if (use.empty()) throw UserError("no device to run on");
  for (int o : use)
    if (o < 0 || static_cast<std::size_t>(o) >= visible)
      throw UserError("device " + std::to_string(o) + " is not visible (" + std::to_string(visible) + " device" +
                      (visible == 1 ? "" : "s") + ")");
  std::vector<int> out(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r)
    out[r] = use[static_cast<std::size_t>(r) * use.size() / std::max<std::uint32_t>(ranks, 1)];
  return out;
}

std::vector<std::uint64_t> predicted_device_peak(const Schedule& s, const Timeline& simulated, const RunPlan& plan,
                                                 std::size_t devices) {
  MemoryModel model;
  model.in_bytes = true;
  const auto stages = plan.device.rank_of_stage.size();
  model.activation.assign(stages, static_cast<double>(plan.device.shape.stash_bytes()));
  model.weight_grad = model.activation;  // the stash is freed whole, by B or by W
  MemoryProfile profile = compute_memory(s, simulated, model);
  // Sum the ranks of one device in time: every change point of any of its ranks.
  struct Change {
    double time;
    std::uint32_t rank;
    double value;
  };
  std::vector<std::vector<Change>> per_device(devices);
  for (std::uint32_t r = 0; r < profile.per_rank.size(); ++r)
    for (const MemoryPoint& p : profile.per_rank[r])
      per_device.at(plan.device.device_of_rank.at(r)).push_back({p.time, r, p.value});
  std::vector<std::uint64_t> peak(devices, 0);
  std::vector<double> current(profile.per_rank.size(), 0.0);
  for (std::size_t d = 0; d < devices; ++d) {
    auto& ch = per_device[d];
    std::stable_sort(ch.begin(), ch.end(), [](const Change& a, const Change& b) { return a.time < b.time; });
    double total = 0;
    for (std::size_t i = 0; i < ch.size();) {
      const double t = ch[i].time;
      for (; i < ch.size() && ch[i].time == t; ++i) {
        total += ch[i].value - current[ch[i].rank];
        current[ch[i].rank] = ch[i].value;
      }
      peak[d] = std::max(peak[d], static_cast<std::uint64_t>(std::max(total, 0.0)));
    }
  }
  return peak;
}

void predict(const RunRequest& req, TimedOptions sim, std::size_t devices, RunResult& res) {
  if (res.shared_compute)
    sim.device_of_rank.assign(res.plan.device.device_of_rank.begin(), res.plan.device.device_of_rank.end());
  const Timeline simulated = simulate_timed(req.schedule, req.stage_to_rank, sim);
  res.simulated_us = simulated.makespan;
  res.predicted_peak = predicted_device_peak(req.schedule, simulated, res.plan, devices);
  if (!req.predict_from_measurement || res.cost_kinds().empty()) return;
  for (const KindTiming& k : res.cost_kinds())
    if (!is_send_recv(k.kind) && k.stage < sim.costs.per_stage.size())
      sim.costs.per_stage[k.stage][static_cast<std::size_t>(k.kind)] = k.stats.median;
  res.simulated_us = simulate_timed(req.schedule, req.stage_to_rank, sim).makespan;
}

BenchmarkReport run_benchmarks(DeviceRuntime& runtime, std::vector<RunRequest> requests,
                               const std::vector<int>& ordinals, const MeasureOptions& opt) {
  BenchmarkReport report;
  report.discovery = runtime.discover();
  if (report.discovery.status != Discovery::Status::Ok) return report;
  std::unique_ptr<Device> device = runtime.open(report.discovery);
  const std::size_t visible = report.discovery.devices.size();
  report.ordinals = devices_to_use(visible, ordinals);
  for (RunRequest& req : requests) {
    if (opt.interrupted && opt.interrupted->load()) {
      report.interrupted = true;
      break;
    }
    RunResult res;
    res.name = req.name;
    req.plan.device_of_rank =
        map_ranks_to_devices(static_cast<std::uint32_t>(req.schedule.rank_count()), visible, ordinals);
    res.plan = build_run_plan(req.schedule, req.stage_to_rank, req.plan);
    if (std::string problem = check_host_order(res.plan); !problem.empty())
      throw PlanError("the launch order of '" + req.name + "' is unsafe: " + problem);
    device->setup(res.plan.device);
    res.measured = measure(*device, res.plan, opt);
    // Event timing resolves about half a microsecond; a violation beyond that is a race.
    if (std::string race = check_measured_order(res.plan, res.measured, 1.0); !race.empty())
      throw PlanError("'" + req.name + "' raced on the device: " + race);
    std::vector<std::uint32_t> devices(res.plan.device.device_of_rank.begin(), res.plan.device.device_of_rank.end());
    res.shared_compute =
        report.discovery.compute_is_shared && req.plan.workload == Workload::Gemm && shares_devices(devices);
    if (res.shared_compute) res.isolated = measure_isolated(*device, res.plan, kIsolatedIterations);
    predict(req, req.sim, visible, res);
    res.microbatches = stated_microbatches(req.schedule);
    res.schedule = std::move(req.schedule);
    if (res.measured.stop == StopReason::Interrupted) report.interrupted = true;
    report.results.push_back(std::move(res));
    if (report.interrupted) break;
  }
  return report;
}

}  // namespace ppsched::run
