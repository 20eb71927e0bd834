// `ppsched tune`: which schedule to run. The engine (trials, scaling, ranking, verdicts) is
// lib/tune and the faces are report/tune_report and report/torchtitan_toml; this file binds the
// flags, gives the engine each placement's costs and memory model from the command's inputs
// (a model file for every shape, a cost table or stage spec only for the shape it describes),
// and writes the result.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "cli_support.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "ir/user_error.hpp"
#include "report/tune_report.hpp"
#include "tune_emit.hpp"
#include "tune_steps.hpp"

namespace ppsched::cli {

namespace {

int run_tune(TuneOptions& opt) {
  TuneRequest& req = opt.request;
  const std::optional<RuntimeModel> runtime = load_runtime_model(opt.inputs);
  if (!runtime) return kExitUsage;
  req.runtime = runtime->runtime;
  req.optimizer = runtime->optimizer;
  req.runtime_params = runtime->params;
  req.blocking_comms = opt.inputs.blocking_comms;
  req.liveness = opt.memory_model.liveness();
  req.keywords = lowering_keywords(opt.keywords);
  if (req.keywords.any_given() && req.runtime != Runtime::PyTorch) {
    print_error(std::string(req.keywords.defer_pp_recv_given ? "--defer-pp-recv" : "--max-active-stages") +
                " changes PyTorch's runtime lowering, which only --runtime pytorch runs");
    return kExitUsage;
  }
  TuneSources sources{cost_description(opt.inputs),
                      opt.inputs.costs,
                      opt.inputs.topology,
                      opt.inputs.stage_spec,
                      opt.inputs.model,
                      "",
                      opt.inputs.gpu,
                      time_model_description(opt.inputs, *runtime),
                      !opt.inputs.model.empty() || !opt.inputs.costs.empty(),
                      !req.liveness && (!opt.inputs.model.empty() || !opt.inputs.stage_spec.empty()),
                      opt.top,
                      {}};
  if (opt.gpus) return run_tune_gpus(opt, sources);
  if (!req.ranks) {
    print_error("give --ranks (the pipeline alone) or --gpus (the whole layout around it)");
    return kExitUsage;
  }
  if (!limit_shapes(opt, sources)) return kExitUsage;
  std::vector<TuneTrial> trials;
  try {
    trials = tune_trials(req);
  } catch (const UserError& e) {
    print_error(e.what());
    return kExitUsage;
  }
  if (trials.empty()) {
    print_error("no family runs on the shapes tried; widen --families or --stages-per-rank");
    return kExitUsage;
  }
  // The largest trial (the most stages per rank and microbatches) bounds the memory of them all.
  if (!within_size_budget(req.ranks, tune_shapes(req).back(), trials.back().microbatches,
                          req.runtime == Runtime::PyTorch, opt.max_schedule_gib, "--max-schedule-gib"))
    return kExitUsage;
  if (opt.inputs.model.empty() && req.microbatch_size != 1) {
    print_error("--microbatch-size describes a --model; without one, costs are per microbatch as given");
    return kExitUsage;
  }
  set_doing(fmt::format("running tune's {} trials", trials.size()));
  opt.inputs.price_what_the_table_times = true;
  // Per placement: a model's inputs for the microbatch size, or the files' (per sample, scaled).
  std::optional<TuneResult> result = tune_schedules(
      req, std::move(trials), [&](const std::vector<std::uint32_t>& stage_to_rank, std::uint32_t samples) {
        if (!opt.inputs.model.empty()) return load_sim_inputs(opt.inputs, req.ranks, stage_to_rank, nullptr, samples);
        std::optional<SimInputs> in = load_sim_inputs(opt.inputs, req.ranks, stage_to_rank);
        if (in && req.global_batch)
          in = per_sample_inputs(*in, samples, req.ranks, static_cast<std::uint32_t>(stage_to_rank.size()));
        return in;
      });
  if (!result) return kExitUsage;
  if (result->found() && !opt.emit_best.empty()) {
    std::vector<EmitCandidate> ranked;
    for (const TuneTrial& t : result->trials)
      if (t.ran) ranked.push_back({ParallelLayout{req.ranks}, req.ranks, &t, req, t.fits});
    if (!emit_settings(opt, sources, ranked)) return kExitUsage;
  }
  write_output(opt.output, [&](ByteSink& out) {
    out.write(opt.format == "json" ? tune_json(req, sources, *result) : tune_text(req, sources, *result));
  });
  if (!opt.html.empty()) write_output(opt.html, [&](ByteSink& out) { out.write(tune_html(req, sources, *result)); });
  return result->found() ? kExitOk : kExitFindings;
}

}  // namespace

void add_tune_command(CLI::App& app, std::vector<Command>& commands) {
  auto opt = std::make_shared<TuneOptions>();
  CLI::App* sub = app.add_subcommand("tune", "Find the best schedule for a model and cluster under a memory cap");
  sub->add_option("--ranks", opt->request.ranks, "Pipeline ranks: tune the pipeline alone")
      ->check(CLI::Range(1u, 4096u));
  sub->add_option("--gpus", opt->gpus,
                  "GPUs in all: search pipeline x tensor x data (x expert) layouts, each replica's state sharding, "
                  "and the schedule (needs --model, --gpu, --global-batch)")
      ->check(CLI::Range(1u, 1u << 20))
      ->excludes("--ranks");
  sub->add_option("--gpus-per-node", opt->gpus_per_node, "GPUs per node with --gpus (default 8)")
      ->check(CLI::Range(1u, 1024u));
  sub->add_option("--microbatches", opt->request.microbatches, "Microbatches per iteration")
      ->check(CLI::Range(1u, 1000000u));
  sub->add_option(
         "--global-batch", opt->request.global_batch,
         "Samples per iteration: every microbatch count m that divides it is tried, with G/m samples per "
         "microbatch (a --model prices each size; costs of --cost/--costs are then per sample, scaled linearly)")
      ->check(CLI::Range(1u, 1000000u));
  sub->add_option("--microbatch-size", opt->request.microbatch_size,
                  "Samples per microbatch with --microbatches and --model (default 1)")
      ->check(CLI::Range(1u, 1000000u));
  sub->add_option("--memory-cap", opt->request.memory_cap,
                  "Peak memory per rank, as simulate --memory-cap: microbatches of activation, or with a stage spec or "
                  "model bytes of its stages' weights (with a model also gradients and optimizer state) plus live "
                  "activations; bytes take suffixes: 80GiB, 75GB; with --memory-model pytorch-liveness, PyTorch's "
                  "activation slots")
      ->transform(memory_cap_size(*sub, "--memory-cap", opt->memory_model))
      ->check(finite_positive());
  add_memory_model_options(*sub, opt->memory_model, "--memory-cap");
  add_sim_input_options(*sub, opt->inputs);
  add_runtime_option(*sub, opt->inputs);
  add_p2p_queues_option(*sub, opt->inputs.p2p_queues);
  add_lowering_keyword_options(*sub, opt->keywords);
  add_model_options(*sub, opt->inputs, false);
  sub->add_option("--families", opt->request.families,
                  "Families to compare (default: all of tune's set, and auto: the automatic search at 1 stage per rank "
                  "in loop placement and 2 in V placement)")
      ->delimiter(',');
  sub->add_option("--stages-per-rank", opt->request.stages_per_rank,
                  "Stages per rank to try (default 1,2,4): single-stage families run at 1, V families at 2, looped "
                  "multi-stage families at each value >= 2; a model needs at least one block per stage")
      ->delimiter(',')
      ->check(CLI::Range(1u, 64u));
  sub->add_option("--top", opt->top, "Rows of the text table (default 10; 0: all)");
  sub->add_option("--format", opt->format, "text (a ranked table) or json (every trial)")
      ->check(CLI::IsMember({"text", "json"}))
      ->option_text("text|json");
  sub->add_option("-o,--output", opt->output, "Where to write the table ('-' = stdout)");
  sub->add_option("--html", opt->html,
                  "Also write a self-contained HTML page: every candidate's iteration time against its peak memory, "
                  "the cap drawn, the pick marked");
  sub->add_option("--emit-best", opt->emit_best,
                  "Directory to write the settings of the best candidate each --framework runs into (docs/formats.md): "
                  "schedule.csv, ppsched_torchtitan_config.py, run_torchtitan.sh, run_megatron.sh, torchtitan.toml");
  sub->add_option("--framework", opt->frameworks,
                  "What --emit-best writes for: torchtitan (its pinned head), torchtitan@0.2.2 (the older TOML "
                  "configs), megatron (default: torchtitan,megatron with a --model, torchtitan@0.2.2 without)")
      ->delimiter(',');
  sub->add_option("--torchtitan-config", opt->torchtitan_config,
                  "The torchtitan config_registry function the emitted one starts from, MODULE:FUNCTION (default: "
                  "torchtitan's own for llama3-8b, llama3-70b and deepseek-v3-like)");
  sub->add_option("--time-budget", opt->request.time_budget_s,
                  "Budget of the whole command (every trial, the auto searches sharing what they leave), in seconds "
                  "of work at a nominal 10M simulated actions/s (default: 1 per auto search, 60 in all)")
      ->check(finite_positive());
  sub->add_option("--max-schedule-gib", opt->max_schedule_gib,
                  "Refuse a configuration whose largest schedule would hold more than this many GiB (default 4)")
      ->check(finite_positive());
  sub->footer(
      "Examples:\n  ppsched tune --ranks 8 --global-batch 64 --model schedules/llama3-8b.model.json --gpu h100 "
      "--memory-cap 80GiB\n  ppsched tune --gpus 64 --global-batch 512 --model schedules/llama3-70b.model.json --gpu "
      "h100");
  commands.push_back({sub, [opt] { return run_tune(*opt); }});
}

}  // namespace ppsched::cli
