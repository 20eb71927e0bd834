#include "sim_inputs.hpp"

#include <CLI/CLI.hpp>

#include "cli_support.hpp"
#include "parse/cost_table.hpp"
#include "parse/stage_spec_json.hpp"
#include "parse/topology_json.hpp"

namespace ppsched::cli {

void add_sim_input_options(CLI::App& sub, SimInputOptions& opt) {
  sub.add_option("--cost", opt.cost, "Per-rank costs, e.g. F=1,B=2,I=1,W=1 (default: F=I=W=1, B=I+W)");
  sub.add_option("--costs", opt.costs, "Cost table: CSV stage,kind,time_us or JSON (overrides --cost)");
  sub.add_option("--overlap-factor", opt.overlap_factor, "OVERLAP_F_B lasts this times the sum of its parts")
      ->check(finite_in(0.0, 1.0));
  sub.add_option("--stage-spec", opt.stage_spec, "Stage spec JSON: bytes per stage boundary, memory, inputs");
  sub.add_option("--topology", opt.topology, "Topology JSON: ranks on nodes and slices, link latency and bandwidth");
  sub.add_flag("--blocking-comms", opt.blocking_comms,
               "Sends and receives block the compute stream in program order (synchronous send/recv); needs a "
               "schedule with SEND/RECV, which --runtime pytorch makes of a compute-only one");
}

namespace {
std::vector<std::string> runtime_name_list() {
  std::vector<std::string> out;
  for (std::string_view n : runtime_names()) out.emplace_back(n);
  return out;
}
}  // namespace

void add_runtime_option(CLI::App& sub, SimInputOptions& opt) {
  sub.add_option("--runtime", opt.runtime,
                 "Whose execution the times describe: pytorch (default: what PyTorch's _PipelineScheduleRuntime runs, "
                 "a compute-only schedule lowered with its runtime recipe) or ideal (the schedule as given, data moving "
                 "as soon as it is produced: a lower bound)")
      ->transform(CLI::IsMember(runtime_name_list(), CLI::ignore_case))
      ->option_text("pytorch|ideal");
}

std::string time_model_description(const SimInputOptions& opt) {
  std::string out(runtime_summary(opt.runtime_model()));
  if (opt.blocking_comms) out += "; blocking sends and receives";
  return out;
}

std::optional<SimInputs> load_sim_inputs(const SimInputOptions& opt, std::uint32_t ranks,
                                         const std::vector<std::uint32_t>& stage_to_rank) {
  const auto stages = static_cast<std::uint32_t>(stage_to_rank.size());
  SimInputs in;
  KindCosts per_rank = unit_costs();
  if (!opt.cost.empty()) {
    std::string error;
    auto parsed = parse_cost_shorthand(opt.cost, error);
    if (!parsed) {
      print_error("--cost " + error);
      return std::nullopt;
    }
    per_rank = *parsed;
  }
  in.sim.costs = CostModel::for_pipeline(ranks, stages, per_rank);
  in.sim.costs.overlap_factor = opt.overlap_factor;
  in.sim.blocking_comms = opt.blocking_comms;
  DiagnosticSink sink;
  bool ok = true;
  if (!opt.costs.empty()) ok &= read_cost_file(opt.costs, in.sim.costs, sink);
  if (!opt.topology.empty()) {
    in.sim.comm.topology = read_topology(opt.topology, ranks, sink);
    ok &= in.sim.comm.topology.has_value();
  }
  if (!opt.stage_spec.empty()) {
    auto spec = read_stage_spec(opt.stage_spec, stages, sink);
    ok &= spec.has_value();
    if (spec) {
      in.sim.comm.stages = *spec;
      in.memory = MemoryModel::from_stage_spec(*spec, stage_to_rank, ranks);
    }
  }
  print_diagnostics(sink);
  if (!ok) return std::nullopt;
  return in;
}

std::string cost_description(const SimInputOptions& opt) {
  return opt.cost.empty() ? "F=1,I=1,W=1,B=2 (unit)" : opt.cost;
}

}  // namespace ppsched::cli
