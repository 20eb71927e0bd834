// `ppsched simulate`: run a schedule through the timed simulator (or PyTorch's lock-step dry run)
// and report iteration time, bubbles, critical path and memory; write a Chrome trace on request.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "cli_support.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "ir/user_error.hpp"
#include "model/recompute.hpp"
#include "report/html_report.hpp"
#include "report/liveness_view.hpp"
#include "report/sim_views.hpp"
#include "report/simulate_report.hpp"
#include "report/svg_gantt.hpp"
#include "report/trace_view.hpp"
#include "schedule_source.hpp"
#include "sim/timed.hpp"
#include "sim_inputs.hpp"
#include "simulate_dry_run.hpp"

namespace ppsched::cli {

namespace {

struct SimulateOptions {
  SourceOptions source;
  std::string simulator = "timed";
  SimInputOptions inputs;
  double memory_cap = 0;
  std::string format = "text";
  std::string output = "-";
  std::string trace, svg, html;
  std::size_t gantt_width = 0;
  double svg_width = 1200;         ///< --width: the SVG's width in px
  std::vector<std::string> views;  ///< empty: default_sim_views for the format
  bool force = false;
  MemoryModelOptions memory_model;  // pytorch-liveness: --memory-cap counts slots
  bool liveness() const { return memory_model.liveness().has_value(); }

  /// The report the flags ask for, of a simulation with these parameters and liveness slots.
  SimulateReport report(SimulateParameters parameters = {}, const LivenessReport* live = nullptr) const {
    return {{source.input, source.schedule, source.ranks, source.microbatches, source.stages_per_rank, source.lower},
            std::move(parameters),
            views,
            live,
            gantt_width};
  }
  /// Whether any output needs when each action ran; else the aggregates run (no Timeline) serves.
  bool needs_timeline() const {
    return !trace.empty() || !svg.empty() || !html.empty() ||
           simulate_report_needs_timeline(report(), format == "json");
  }
};

int run_simulate(SimulateOptions opt) {
  if (opt.views.empty()) opt.views = default_sim_views(opt.format == "json");
  if (opt.inputs.model == "timed" || opt.inputs.model == "pytorch-steps") {
    // Before model files, --model chose the simulator.
    print_warning("--model " + opt.inputs.model + " is now --simulator " + opt.inputs.model +
                  "; --model names a model file");
    opt.simulator = opt.inputs.model;
    opt.inputs.model.clear();
  }
  opt.source.memory_cap = opt.memory_cap;  // --schedule auto searches under the cap it is checked against
  opt.source.cap_liveness = opt.memory_model.liveness();
  opt.source.sim_inputs = &opt.inputs;
  if (opt.simulator == "pytorch-steps" && refuse_timed_only_flags(opt.inputs)) return kExitUsage;
  if (opt.simulator == "timed" && opt.format == "csv") {
    print_error("--format csv is the lock-step grid of --simulator pytorch-steps; use text or json");
    return kExitUsage;
  }
  const bool lock_step = opt.simulator == "pytorch-steps";
  const std::optional<Preparation> how =
      preparation_for(opt.source, lock_step ? Runner::LockStep : Runner::Runtime, opt.inputs.runtime_model());
  if (!how) return kExitUsage;
  std::optional<GivenSchedule> given = read_source(opt.source, *how);
  if (!given) return kExitUsage;
  // A clean schedule's census (sim/leaf_census.hpp) stands in for the simulator's own pass over the
  // actions, when what runs is the schedule as given.
  std::shared_ptr<const LeafCensus> census;
  if (refuse_invalid_schedule(opt.source, opt.force, *given, &census)) return kExitUsage;
  std::optional<RuntimeModel> runtime;
  if (!lock_step && !(runtime = load_runtime_model(opt.inputs))) return kExitUsage;
  std::optional<PreparedSchedule> prepared = prepare(std::move(*given), *how);
  if (!prepared) return kExitUsage;
  if (prepared->lowered) census.reset();
  if (prepared->dropped_comms)
    print_note(
        "--runtime megatron issues its own sends and receives: the schedule's SEND and RECV actions are left out");
  Schedule s = std::move(*prepared).take_as_run();
  prepared.reset();
  const std::optional<InferredShapeOf> known = shape_from_census(s, census.get());
  if (lock_step) return run_dry_run(s, known, opt.report().source, opt.format, opt.output);
  if (refuse_inert_comm_flags(opt.inputs, s)) return kExitUsage;

  // Both the placement and the map padded to every stage in use, from one inference (or none).
  const Placement placed = known ? known->placement : placement_of(s);
  auto inputs =
      load_sim_inputs(opt.inputs, static_cast<std::uint32_t>(s.rank_count()), stage_to_rank_in_use(s, placed), &s);
  if (!inputs) return kExitUsage;
  const TimedOptions& sim = inputs->sim;
  const MemoryModel& memory = inputs->memory;
  std::string time_model = time_model_description(opt.inputs, *runtime);
  // A cost table (run --cost-out) and a model file give microseconds; else the costs' own unit.
  const bool times_in_us = !opt.inputs.costs.empty() || !opt.inputs.model.empty();
  const std::string time_unit = times_in_us ? "us" : "cost units";
  if (std::string r = recompute_description(inputs->sim.comm.stages); !r.empty()) time_model += "; " + r;

  Timeline t;
  SimAnalysis a;
  const std::vector<std::uint32_t>& stage_to_rank = placed.stage_to_rank;  // as placed, not padded
  set_doing("simulating");
  try {
    a = simulate_runtime(s, stage_to_rank, sim, memory, *runtime, opt.needs_timeline() ? &t : nullptr, census.get());
  } catch (const UserError& e) {  // a model that cannot take this schedule
    print_error(e.what());
    return kExitUsage;
  } catch (const TimedDeadlock& d) {
    print_error(timed_deadlock_text(d, s));
    return kExitFindings;
  }
  if (!opt.trace.empty()) {
    TraceOptions trace;
    // With free transfers a SEND/RECV slice has no length to anchor a legacy flow arrow in;
    // Perfetto's bind_id flows still bind then.
    bool free_comms = !sim.comm.topology.has_value();
    trace.flows = free_comms ? TraceFlows::V2 : TraceFlows::V1;
    trace.label = "time model: " + time_model;
    trace.times_in_us = times_in_us;
    write_output(opt.trace, [&](ByteSink& out) { write_chrome_trace(s, t, &a.memory, out, trace); });
  }
  std::optional<LivenessReport> live;
  try {
    if (opt.liveness()) live = liveness_report(s, stage_to_rank, *opt.memory_model.liveness(), opt.memory_cap);
  } catch (const LivenessError& e) {
    print_error(liveness_error_text(e));
    return kExitFindings;
  }
  // Under pytorch-liveness the cap counts slots, which the byte model's views do not.
  const double byte_cap = opt.liveness() ? 0 : opt.memory_cap;
  const StageCosts stage_costs{sim.costs, sim.comm.stages, inputs->stage_layers, s.num_stages, times_in_us};
  const SimViewInput view_input{s, t, a, SimReportOptions{byte_cap, time_model, runtime->optimizer}, &stage_costs};
  if (!opt.html.empty()) {
    const HtmlReportInput html{s, t, a, view_input.options, simulate_title(opt.report().source), time_unit};
    write_output(opt.html, [&](ByteSink& out) { write_html_report(html, out); });
  }
  if (!opt.svg.empty()) {
    SvgOptions svg;
    svg.width = opt.svg_width;
    // Microseconds where the costs were (a cost table, a model); else the costs' own unit.
    svg.time_unit = time_unit;
    write_output(opt.svg, [&](ByteSink& out) { write_svg_gantt(s, t, out, svg); });
  }
  const SimulateReport report = opt.report(
      simulate_parameters(opt.inputs, *runtime, time_model, sim.send, sim.p2p_queues), live ? &*live : nullptr);
  write_output(opt.output, [&](ByteSink& out) {
    out.write(opt.format == "json" ? simulate_json(report, view_input) : simulate_text(report, view_input));
  });
  if (live) return fits_under_cap(live->capped_peak(), live->cap) ? kExitOk : kExitFindings;
  return fits_under_cap(a.memory.max_peak(), opt.memory_cap) ? kExitOk : kExitFindings;
}

}  // namespace

void add_simulate_command(CLI::App& app, std::vector<Command>& commands) {
  auto opt = std::make_shared<SimulateOptions>();
  CLI::App* sub =
      app.add_subcommand("simulate", "Simulate a schedule: iteration time, bubbles, critical path, memory, traces");
  add_source_options(*sub, opt->source);
  sub->add_option("--simulator", opt->simulator,
                  "timed (default: event-driven with costs) or pytorch-steps (PyTorch's lock-step dry run)")
      ->check(CLI::IsMember({"timed", "pytorch-steps"}))
      ->option_text("timed|pytorch-steps");
  add_sim_input_options(*sub, opt->inputs);
  add_gpu_count_option(*sub, opt->inputs);
  add_send_mode_option(*sub, opt->inputs.send_mode);
  add_p2p_queues_option(*sub, opt->inputs.p2p_queues);
  add_runtime_option(*sub, opt->inputs);
  add_model_options(*sub, opt->inputs);
  add_memory_model_options(*sub, opt->memory_model, "--memory-cap");
  sub->add_option(
         "--memory-cap", opt->memory_cap,
         "Flag ranks whose peak memory exceeds this (exit 1): microbatches of activation, or with "
         "--stage-spec or --model bytes of its stages' weights plus live activations (as validate --max-memory; "
         "80GiB, 75GB); 0: none")
      ->transform(memory_cap_size(*sub, "--memory-cap", opt->memory_model))
      ->check(finite_non_negative());
  sub->add_option("--format", opt->format, "text, json, or csv (pytorch-steps grid, as PyTorch's simulated.csv)")
      ->check(CLI::IsMember({"text", "json", "csv"}))
      ->option_text("text|json|csv");
  sub->add_option("-o,--output", opt->output, "Where to write the report ('-' = stdout)");
  sub->add_option("--trace", opt->trace, "Write a Chrome trace (open in Perfetto)");
  sub->add_option("--svg", opt->svg, "Write an SVG Gantt chart");
  sub->add_option("--html", opt->html,
                  "Write a self-contained HTML report: summary, zoomable timeline, memory over time against the cap, "
                  "idle time by cause");
  sub->add_option("--width", opt->svg_width,
                  "Width of the SVG chart in px: wider boxes hold their labels (default 1200)")
      ->check(CLI::Range(200.0, 200000.0));
  sub->add_option("--views", opt->views,
                  "The report's views, comma-separated: summary, bubbles, memory, critical-path, memory-timeline, "
                  "stage-costs (default: all but memory-timeline and stage-costs in text; summary,bubbles,memory in "
                  "JSON, a few KB at any length). Without critical-path, memory-timeline, a trace, an SVG or a Gantt "
                  "chart no timeline is built: fast at any length")
      ->delimiter(',')
      ->check(CLI::IsMember(sim_view_names()))
      ->option_text("LIST");
  sub->add_option("--gantt", opt->gantt_width, "Add an ASCII Gantt chart this many columns wide")
      ->check(CLI::Range(std::size_t{10}, std::size_t{1000}));
  sub->add_flag("--force", opt->force,
                "Simulate a schedule that validate's structural rules reject (missing, duplicate or misplaced "
                "actions), with a warning");
  sub->footer("Example:\n  ppsched simulate schedules/zbv-4ranks-8mb.csv --cost F=1,I=1,W=1 --trace zbv.trace.json");
  commands.push_back({sub, [opt] { return run_simulate(*opt); }});
}

}  // namespace ppsched::cli
