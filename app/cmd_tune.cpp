// `ppsched tune`: which schedule to run. The engine (trials, scaling, ranking, verdicts) is
// lib/tune and the faces are report/tune_report; this file binds the flags, gives the engine each
// placement's costs and memory model from the command's inputs, and writes the result.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "cli_support.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "parse/pytorch_csv.hpp"
#include "report/tune_report.hpp"
#include "schedule_source.hpp"
#include "sim_inputs.hpp"
#include "tune/tune.hpp"

namespace ppsched::cli {

namespace {

struct TuneOptions {
  TuneRequest request;
  SimInputOptions inputs;
  std::string format = "text";
  std::string output = "-";
  std::string emit_best;
  double max_schedule_gib = 4;
};

int run_tune(const TuneOptions& opt) {
  const TuneRequest& req = opt.request;
  std::vector<TuneTrial> trials;
  try {
    trials = tune_trials(req);
  } catch (const std::invalid_argument& e) {
    print_error(e.what());
    return kExitUsage;
  }
  // The largest trial (4 stages per rank, the most microbatches) bounds the memory of them all.
  if (!within_size_budget(req.ranks, 4, trials.back().microbatches, false, opt.max_schedule_gib, "--max-schedule-gib"))
    return kExitUsage;
  std::optional<TuneResult> result =
      tune_schedules(req, std::move(trials), [&](const std::vector<std::uint32_t>& stage_to_rank) {
        return load_sim_inputs(opt.inputs, req.ranks, stage_to_rank);
      });
  if (!result) return kExitUsage;
  if (result->found() && !opt.emit_best.empty())
    write_output(opt.emit_best, [&](ByteSink& out) { write_pytorch_csv(result->trials.front().schedule, out); });
  const TuneSources sources{cost_description(opt.inputs), opt.inputs.costs, opt.inputs.topology, opt.inputs.stage_spec};
  write_output(opt.output, [&](ByteSink& out) {
    out.write(opt.format == "json" ? tune_json(req, sources, *result) : tune_text(req, sources, *result));
  });
  return result->found() ? kExitOk : kExitFindings;
}

}  // namespace

void add_tune_command(CLI::App& app, std::vector<Command>& commands) {
  auto opt = std::make_shared<TuneOptions>();
  CLI::App* sub = app.add_subcommand("tune", "Find the best schedule for a model and cluster under a memory cap");
  sub->add_option("--ranks", opt->request.ranks, "Pipeline ranks")->required()->check(CLI::Range(1u, 4096u));
  sub->add_option("--microbatches", opt->request.microbatches, "Microbatches per iteration")->check(CLI::Range(1u, 1000000u));
  sub->add_option("--global-batch", opt->request.global_batch,
                  "Samples per iteration: every microbatch count that divides it is tried; costs and "
                  "activation sizes are then per sample and scale with the microbatch size")
      ->check(CLI::Range(1u, 1000000u));
  sub->add_option("--memory-cap", opt->request.memory_cap,
                  "Peak memory per rank, as simulate --memory-cap: microbatches of activation, or with a stage spec "
                  "bytes of its stages' weights plus live activations")
      ->check(finite_positive());
  add_sim_input_options(*sub, opt->inputs);
  sub->add_option("--families", opt->request.families, "Families to compare (default: all that fit the shape, and auto)")
      ->delimiter(',');
  sub->add_option("--format", opt->format, "text (a ranked table) or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->option_text("text|json");
  sub->add_option("-o,--output", opt->output, "Where to write the table ('-' = stdout)");
  sub->add_option("--emit-best", opt->emit_best, "Write the winner's schedule as PyTorch CSV (what torchtitan loads)");
  sub->add_option("--time-budget", opt->request.time_budget_s, "Budget of each auto search, in seconds of work at a nominal 10M simulated actions/s (default 1)")
      ->check(finite_positive());
  sub->add_option("--max-schedule-gib", opt->max_schedule_gib,
                  "Refuse a configuration whose largest schedule would hold more than this many GiB (default 4)")
      ->check(finite_positive());
  commands.push_back({sub, [opt] { return run_tune(*opt); }});
}

}  // namespace ppsched::cli
