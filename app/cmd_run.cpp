// `ppsched run`: execute schedules on this node's GPUs, time them the nvbench way, and compare the
// measured iteration with the simulated one. The work is in lib/run; this file binds flags,
// discovers devices once (through run_benchmarks), and writes the table, JSON, trace and cost table.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "check/check.hpp"
#include "cli_support.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "io/output_file.hpp"
#include "parse/cost_table.hpp"
#include "report/trace_view.hpp"
#include "run/benchmark.hpp"
#include "run/fake_device.hpp"
#include "schedule_source.hpp"
#include "sim_inputs.hpp"

namespace ppsched::cli {

namespace {

struct RunOptions {
  SourceOptions source;
  SimInputOptions inputs;
  std::string backend = "cuda";
  std::vector<int> devices;
  std::string workload = "gemm";
  run::GemmShape shape;
  std::string dtype = "bf16";
  std::uint64_t activation_bytes = 0;
  std::size_t warmup = 5, iters = 0, min_samples = 10;
  double min_time = 0.5, max_noise = 0.5, timeout = 15;
  std::string format = "text", output = "-", trace, cost_out;
  double min_ratio = 0, max_ratio = 0;
  double fake_jitter = 0.02;
  int fake_devices = 1;
};

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};
extern "C" void on_interrupt(int sig) {
  g_signal.store(sig);
  g_interrupted.store(true);
}

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// Every stage placed (a stage nothing mentions goes to rank 0), as the plan and the memory
// model index it.
std::vector<std::uint32_t> full_placement(const Schedule& s) {
  std::vector<std::uint32_t> p = stage_to_rank_of(s);
  p.resize(std::max<std::size_t>(p.size(), std::max(s.num_stages, infer_stage_count(s))), 0);
  return p;
}

// The validator's verdict on the schedule as given (a file before lowering, with its line and
// column positions); a schedule with errors is refused before any device work.
bool passes_validation(const AsGiven& given, const std::string& name, const std::vector<std::uint32_t>& placement,
                       const TimedOptions& sim) {
  const Schedule& s = given.schedule;
  CheckContext ctx = context_for(s, placement, name, &given.source);
  ctx.placement_inferred = s.placement.style == PlacementStyle::Unspecified;
  if (!sim.comm.stages.empty()) ctx.stage_spec = &sim.comm.stages;
  DiagnosticSink sink;
  run_checks(ctx, sink);
  if (!sink.has_errors()) return true;
  print_diagnostics(sink);
  print_error("refusing to run '" + name + "': it fails validation (ppsched validate shows the same)");
  return false;
}

std::string mib(std::uint64_t bytes) { return fmt::format("{:.1f}", static_cast<double>(bytes) / (1 << 20)); }

std::string text_report(const RunOptions& opt, const run::BenchmarkReport& rep) {
  const run::Discovery& d = rep.discovery;
  std::string out = fmt::format("# ppsched {} run: backend {}, driver {}, runtime {}\n", PPSCHED_VERSION, d.backend,
                                d.driver_version, d.runtime_version);
  for (int o : rep.ordinals) {
    const run::DeviceInfo& dev = d.devices.at(o);
    out += dev.total_memory_bytes ? fmt::format("# device {}: {}, {} MiB, {} SMs\n", o, dev.name,
                                                dev.total_memory_bytes >> 20, dev.sm_count)
                                  : fmt::format("# device {}: {}\n", o, dev.name);
  }
  if (opt.workload == "gemm")
    out += fmt::format("# workload gemm: {} layers of {}x{}, {} tokens per microbatch, {}\n", opt.shape.layers,
                       opt.shape.hidden, opt.shape.hidden, opt.shape.tokens, opt.dtype);
  else
    out += "# workload synthetic: each action spins for its cost (" + cost_description(opt.inputs) + ")\n";
  out += fmt::format("# warm-up {}; stop: {}\n", opt.warmup,
                     opt.iters ? fmt::format("{} iterations", opt.iters)
                               : fmt::format(">= {} samples and {} s, then noise <= {}%, timeout {} s", opt.min_samples,
                                             opt.min_time, opt.max_noise, opt.timeout));
  out += fmt::format("# sim_us: {}; times per iteration in microseconds; p99 by nearest rank\n",
                     opt.inputs.cost.empty() && opt.inputs.costs.empty() && opt.workload == "gemm"
                         ? "the simulator with this run's measured cost table"
                         : "the simulator with the given costs");
  out += fmt::format("#{:>19} {:>5} {:>4} {:>6} {:>6} {:>11} {:>11} {:>11} {:>11} {:>6} {:>11} {:>6}  {}\n",
                     "schedule", "ranks", "mbs", "warmup", "iters", "median_us", "p99_us", "min_us", "max_us", "cv%",
                     "sim_us", "ratio", "stop");
  for (const run::RunResult& r : rep.results) {
    const run::SampleStats& s = r.measured.iteration;
    out += fmt::format(" {:>19} {:>5} {:>4} {:>6} {:>6} {:>11.1f} {:>11.1f} {:>11.1f} {:>11.1f} {:>6.2f} {:>11.1f} {:>6.3f}  {}\n",
                       r.name, r.plan.device.device_of_rank.size(), r.microbatches,
                       r.measured.warmup, s.count, s.median, s.p99, s.min, s.max, s.cv_pct, r.simulated_us, r.ratio(),
                       run::stop_reason_name(r.measured.stop));
  }
  out += "# peak memory per device, MiB: measured (buffers) / predicted (memory model) / fixed (weights)\n";
  for (const run::RunResult& r : rep.results)
    for (std::size_t i = 0; i < rep.ordinals.size(); ++i) {
      const int o = rep.ordinals[i];
      const auto& m = r.measured.memory;
      out += fmt::format("#{:>19} device {}: {} / {} / {}\n", r.name, o,
                         mib(o < static_cast<int>(m.peak_buffer_bytes.size()) ? m.peak_buffer_bytes[o] : 0),
                         mib(o < static_cast<int>(r.predicted_peak.size()) ? r.predicted_peak[o] : 0),
                         mib(o < static_cast<int>(m.fixed_bytes.size()) ? m.fixed_bytes[o] : 0));
    }
  return out;
}

nlohmann::ordered_json stats_json(const run::SampleStats& s) {
  return {{"count", s.count},   {"p50_us", s.median}, {"p99_us", s.p99},   {"min_us", s.min},
          {"max_us", s.max},    {"avg_us", s.mean},   {"stdev_us", s.stdev}, {"cv_pct", s.cv_pct}};
}

std::string json_report(const RunOptions& opt, const run::BenchmarkReport& rep) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["config"] = {{"backend", opt.backend},
                 {"workload", opt.workload},
                 {"layers", opt.shape.layers},
                 {"hidden", opt.shape.hidden},
                 {"tokens", opt.shape.tokens},
                 {"dtype", opt.dtype},
                 {"warmup", opt.warmup},
                 {"iters", opt.iters},
                 {"min_samples", opt.min_samples},
                 {"min_time_s", opt.min_time},
                 {"max_noise_pct", opt.max_noise},
                 {"timeout_s", opt.timeout},
                 {"cost", cost_description(opt.inputs)},
                 {"costs_file", opt.inputs.costs},
                 {"p99_method", "nearest-rank"}};
  j["env"] = {{"ppsched_version", PPSCHED_VERSION},
              {"driver_version", rep.discovery.driver_version},
              {"runtime_version", rep.discovery.runtime_version}};
  auto& devs = j["devices"] = nlohmann::ordered_json::array();
  for (int o : rep.ordinals) {
    const run::DeviceInfo& d = rep.discovery.devices.at(o);
    devs.push_back({{"ordinal", o}, {"name", d.name}, {"total_memory_bytes", d.total_memory_bytes}, {"sm_count", d.sm_count}});
  }
  auto& results = j["results"] = nlohmann::ordered_json::array();
  for (const run::RunResult& r : rep.results) {
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
    res["measured_over_simulated"] = r.ratio();
    res["memory"] = {{"measured_peak_bytes", r.measured.memory.peak_buffer_bytes},
                     {"predicted_peak_bytes", r.predicted_peak},
                     {"fixed_bytes", r.measured.memory.fixed_bytes}};
    auto& actions = res["actions"] = nlohmann::ordered_json::array();
    for (const run::KindTiming& k : r.measured.kinds) {
      nlohmann::ordered_json a = {{"stage", k.stage}, {"kind", std::string(kind_name(k.kind))}};
      a.update(stats_json(k.stats));
      actions.push_back(std::move(a));
    }
    results.push_back(std::move(res));
  }
  return j.dump(2) + "\n";
}

int run_run(RunOptions opt) {
  const std::vector<std::string> names = split_names(opt.source.schedule);
  if (names.size() > 1 && (!opt.trace.empty() || !opt.cost_out.empty())) {
    print_error("--trace and --cost-out describe one schedule; give one --schedule with them");
    return kExitUsage;
  }
  opt.shape.element_bytes = opt.dtype == "fp32" ? 4 : 2;
  // Read and check every schedule before touching a device.
  std::vector<run::RunRequest> requests;
  std::vector<std::string> sources = names.empty() ? std::vector<std::string>{""} : names;
  for (const std::string& name : sources) {
    SourceOptions src = opt.source;
    src.schedule = name;
    src.sim_inputs = &opt.inputs;
    AsGiven given;
    std::optional<Schedule> s = load_schedule(src, &given);
    if (!s) return kExitUsage;
    run::RunRequest req;
    req.name = name.empty() ? opt.source.input : name;
    req.stage_to_rank = full_placement(*s);
    auto inputs = load_sim_inputs(opt.inputs, static_cast<std::uint32_t>(s->rank_count()), req.stage_to_rank);
    if (!inputs) return kExitUsage;
    if (!passes_validation(given, req.name, req.stage_to_rank, inputs->sim)) return kExitFindings;
    req.sim = inputs->sim;
    req.plan.workload = opt.workload == "gemm" ? run::Workload::Gemm : run::Workload::Synthetic;
    req.plan.shape = opt.shape;
    req.plan.blocking_comms = opt.inputs.blocking_comms;
    req.plan.costs = inputs->sim.costs;
    req.plan.comm = inputs->sim.comm;
    req.plan.activation_bytes = opt.activation_bytes;
    req.predict_from_measurement =
        opt.workload == "gemm" && opt.inputs.cost.empty() && opt.inputs.costs.empty();
    req.schedule = std::move(*s);
    requests.push_back(std::move(req));
  }

  std::unique_ptr<run::DeviceRuntime> runtime;
  if (opt.backend == "fake")
    runtime = std::make_unique<run::FakeRuntime>(run::FakeOptions{opt.fake_devices, opt.fake_jitter, 1});
  else
    runtime = run::make_cuda_runtime();

  run::MeasureOptions measure;
  measure.warmup = opt.warmup;
  measure.rule = {opt.min_samples, opt.min_time, opt.max_noise, opt.timeout, opt.iters};
  measure.interrupted = &g_interrupted;
  // Ctrl-C stops at the next iteration boundary; the outputs are written afterwards with the
  // usual protection (install_output_signal_handlers) back in place.
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  run::BenchmarkReport rep;
  try {
    rep = run::run_benchmarks(*runtime, std::move(requests), opt.devices, measure);
  } catch (const run::PlanError& e) {
    install_output_signal_handlers();
    print_error(e.what());
    return kExitFindings;
  } catch (const TimedDeadlock&) {
    install_output_signal_handlers();
    print_error("the schedule deadlocks in the simulator (ppsched simulate shows where)");
    return kExitFindings;
  } catch (const run::DeviceError& e) {
    install_output_signal_handlers();
    print_error(std::string("device error: ") + e.what());
    return kExitFindings;
  } catch (const std::invalid_argument& e) {
    install_output_signal_handlers();
    print_error(e.what());
    return kExitUsage;
  }
  install_output_signal_handlers();
  if (rep.discovery.status != run::Discovery::Status::Ok) {
    static constexpr const char* kWhy[] = {"ok", "built without CUDA", "no GPU driver", "no GPU device", "CUDA error"};
    print_error(fmt::format("no usable GPU ({}): {}", kWhy[static_cast<int>(rep.discovery.status)], rep.discovery.message));
    return kExitNoGpu;
  }
  if (!rep.results.empty()) {
    const run::RunResult& first = rep.results.front();
    if (!opt.trace.empty()) {
      const Timeline t = run::measured_timeline(first.plan, first.measured);
      TraceOptions trace;
      trace.flows = TraceFlows::V2;
      trace.label = "measured by ppsched run (" + rep.discovery.backend + "), last timed iteration";
      trace.thread_prefix = "gpu ";  // "gpu compute", "gpu send", "gpu recv": measured device streams
      write_output(opt.trace, [&](ByteSink& out) { write_chrome_trace(first.schedule, t, nullptr, out, trace); });
    }
    if (!opt.cost_out.empty())
      write_output(opt.cost_out, [&](ByteSink& out) { write_cost_table(run::measured_costs(first.measured), out); });
  }
  write_output(opt.output, [&](ByteSink& out) {
    out.write(opt.format == "json" ? json_report(opt, rep) : text_report(opt, rep));
  });
  if (rep.interrupted) return g_signal.load() == SIGTERM ? 128 + SIGTERM : kExitInterrupted;
  for (const run::RunResult& r : rep.results) {
    const double ratio = r.ratio();
    if ((opt.min_ratio > 0 && ratio < opt.min_ratio) || (opt.max_ratio > 0 && ratio > opt.max_ratio)) {
      print_error(fmt::format("'{}': measured/simulated = {:.3f}, outside [{}, {}]", r.name, ratio, opt.min_ratio,
                              opt.max_ratio > 0 ? fmt::format("{}", opt.max_ratio) : "inf"));
      return kExitFindings;
    }
  }
  return kExitOk;
}

}  // namespace

void add_run_command(CLI::App& app, std::vector<Command>& commands) {
  auto opt = std::make_shared<RunOptions>();
  opt->source.lower = "send-recv";  // what PyTorch's runtime executes
  CLI::App* sub = app.add_subcommand("run", "Execute schedules on this node's GPUs, measure them, compare with the simulator");
  add_source_options(*sub, opt->source);
  add_sim_input_options(*sub, opt->inputs);
  sub->add_option("--backend", opt->backend, "cuda (default), or fake: replay the costs without a GPU (tests, dry runs)")
      ->check(CLI::IsMember({"cuda", "fake"}))
      ->option_text("cuda|fake");
  sub->add_option("--devices", opt->devices, "Device ordinals to use, e.g. 0,1 (default: all visible)")
      ->delimiter(',')
      ->check(finite_non_negative());
  sub->add_option("--workload", opt->workload, "gemm (cuBLAS linear layers) or synthetic (spin for each action's cost)")
      ->check(CLI::IsMember({"gemm", "synthetic"}))
      ->option_text("gemm|synthetic");
  sub->add_option("--layers", opt->shape.layers, "gemm: linear layers per stage")->check(CLI::Range(1u, 4096u));
  sub->add_option("--hidden", opt->shape.hidden, "gemm: hidden size")->check(CLI::Range(1u, 1u << 20));
  sub->add_option("--tokens", opt->shape.tokens, "gemm: tokens per microbatch")->check(CLI::Range(1u, 1u << 24));
  sub->add_option("--dtype", opt->dtype, "gemm: bf16 or fp32")->check(CLI::IsMember({"bf16", "fp32"}));
  sub->add_option("--activation-bytes", opt->activation_bytes,
                  "Bytes per transfer when the stage spec gives none (default: tokens x hidden)");
  sub->add_option("-w,--warmup", opt->warmup, "Untimed iterations first (default 5)");
  sub->add_option("-n,--iters", opt->iters, "Exactly this many timed iterations (default: the stop rule)");
  sub->add_option("--min-samples", opt->min_samples, "Stop rule: at least this many iterations (default 10)");
  sub->add_option("--min-time", opt->min_time, "Stop rule: at least this much measured time, s (default 0.5)")
      ->check(finite_non_negative());
  sub->add_option("--max-noise", opt->max_noise, "Stop rule: stop when the CV% is at most this (default 0.5)")
      ->check(finite_non_negative());
  sub->add_option("--timeout", opt->timeout, "Stop rule: give up timing after this many seconds (default 15)")
      ->check(finite_non_negative());
  sub->add_option("--format", opt->format, "text (a table with # headers) or json")
      ->check(CLI::IsMember({"text", "json"}));
  sub->add_option("-o,--output", opt->output, "Write the report here (default: stdout)");
  sub->add_option("--trace", opt->trace, "Chrome trace of the last timed iteration (as simulate's)");
  sub->add_option("--cost-out", opt->cost_out, "Write the measured cost table (stage,kind,time_us) for simulate --costs");
  sub->add_option("--min-ratio", opt->min_ratio, "Exit 1 when measured/simulated is below this")
      ->check(finite_non_negative());
  sub->add_option("--max-ratio", opt->max_ratio, "Exit 1 when measured/simulated is above this")
      ->check(finite_non_negative());
  sub->add_option("--fake-jitter", opt->fake_jitter, "fake backend: each launch varies by up to this fraction (0.02)")
      ->check(finite_in(0.0, 0.9));
  sub->add_option("--fake-devices", opt->fake_devices, "fake backend: how many devices it pretends to have (1)")
      ->check(CLI::Range(1, 64));
  commands.push_back({sub, [opt] { return run_run(*opt); }});
}

}  // namespace ppsched::cli
