#include "sim_inputs.hpp"

#include <CLI/CLI.hpp>

#include "cli_support.hpp"
#include "io/input_file.hpp"
#include "parse/cost_table.hpp"
#include "parse/stage_spec_json.hpp"
#include "parse/topology_json.hpp"

namespace ppsched::cli {

void add_sim_input_options(CLI::App& sub, SimInputOptions& opt) {
  sub.add_option("--cost", opt.cost, "Per-rank costs, e.g. F=1,B=2,I=1,W=1 (default: F=I=W=1, B=I+W)");
  sub.add_option("--costs", opt.costs,
                 "Cost table: CSV stage,kind,time_us or JSON (overrides --cost); it must price every stage and "
                 "compute kind the schedule runs");
  sub.add_option("--fill", opt.fill,
                 "What the cost table leaves out costs: none (an error, the default) or unit (the --cost values, "
                 "unit costs by default, with a warning)")
      ->check(CLI::IsMember({"none", "unit"}))
      ->option_text("none|unit");
  sub.add_option("--overlap-factor", opt.overlap_factor, "OVERLAP_F_B lasts this times the sum of its parts")
      ->check(finite_in(0.0, 1.0));
  sub.add_option("--stage-spec", opt.stage_spec, "Stage spec JSON: bytes per stage boundary, memory, inputs");
  sub.add_option("--topology", opt.topology, "Topology JSON: ranks on nodes and slices, link latency and bandwidth");
  sub.add_flag("--blocking-comms", opt.blocking_comms, "Compute waits on its receives (PyTorch's runtime)");
}

std::optional<SimInputs> load_sim_inputs(const SimInputOptions& opt, std::uint32_t ranks,
                                         const std::vector<std::uint32_t>& stage_to_rank, const Schedule* schedule) {
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
  if (!opt.costs.empty()) {
    CostCoverage given;
    if (read_cost_file(opt.costs, in.sim.costs, sink, &given)) {
      CostNeeds needs;
      needs.of_one_schedule = schedule != nullptr;
      needs.kinds = schedule ? compute_kinds_by_stage(*schedule, stages) : every_compute_kind(stages);
      needs.filled_with = opt.cost.empty() ? "the unit costs" : "the --cost values";
      ok &= check_cost_coverage(display_name(opt.costs), given, needs, opt.fill == "unit", sink);
    } else {
      ok = false;
    }
  }
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
