// `ppsched tune`: which schedule to run. The engine (trials, scaling, ranking, verdicts) is
// lib/tune and the faces are report/tune_report and report/torchtitan_toml; this file binds the
// flags, gives the engine each placement's costs and memory model from the command's inputs
// (a model file for every shape, a cost table or stage spec only for the shape it describes),
// and writes the result.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <filesystem>
#include <memory>
#include <string>

#include "cli_support.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "ir/user_error.hpp"
#include "parse/model_json.hpp"
#include "parse/pytorch_csv.hpp"
#include "parse/stage_count.hpp"
#include "report/torchtitan_toml.hpp"
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
  std::string html;  ///< --html: the candidates' page
  std::string emit_best;
  std::size_t top = 10;
  double max_schedule_gib = 4;
  MemoryModelOptions memory_model;  // pytorch-liveness: --memory-cap counts slots
  KeywordOptions keywords;          // PyTorch's runtime lowering, under --runtime pytorch
};

// DIR/schedule.csv (the winner, compute-only, as torchtitan loads it) and DIR/torchtitan.toml,
// as one set: after the command both are new or both are old.
bool emit_best(const TuneOptions& opt, const TuneSources& sources, const TuneTrial& best) {
  const TuneRequest& req = opt.request;
  if (std::error_code ec; std::filesystem::create_directories(opt.emit_best, ec), ec) {
    print_error("--emit-best " + opt.emit_best + ": cannot create the directory: " + ec.message());
    return false;
  }
  const Schedule schedule = tune_schedule_of(req, best);
  const std::string csv = (std::filesystem::path(opt.emit_best) / "schedule.csv").string(),
                    toml = (std::filesystem::path(opt.emit_best) / "torchtitan.toml").string();
  TorchtitanSettings t = tune_best_settings(req, sources, best, schedule.placement.style == PlacementStyle::V, csv);
  if (!opt.inputs.model.empty()) {
    auto mp = load_model_partition(opt.inputs, req.ranks * best.stages_per_rank, best.microbatch_size);
    if (!mp) return false;
    t.module_fqns = torchtitan_module_fqns(mp->model, mp->partition);
  }
  const std::string settings = torchtitan_toml(t);  // refuses what TOML cannot hold, before any write
  write_outputs_together({{csv, [&](ByteSink& out) { write_pytorch_csv(schedule, out); }},
                          {toml, [&](ByteSink& out) { out.write(settings); }}});
  print_note("wrote " + csv + " and " + toml);
  return true;
}

// What the inputs allow the engine to try: a model's blocks bound the stage count; a fixed
// partition, a cost table or a stage spec describes one stage count. Adds what it leaves out to
// the notes. False: a problem was printed.
bool limit_shapes(TuneOptions& opt, TuneSources& sources) {
  TuneRequest& req = opt.request;
  const SimInputOptions& in = opt.inputs;
  if (!in.model.empty()) {
    DiagnosticSink sink;
    std::optional<NetworkModel> model = read_model(in.model, sink);
    print_diagnostics(sink);
    if (!model) return false;
    sources.model_name = model->name;
    if (const GpuSpec* gpu = find_gpu(in.gpu); gpu && req.memory_cap <= 0)
      sources.notes.push_back(
          fmt::format("no --memory-cap: nothing is ruled out for memory, though one {} holds {:.0f} GiB", gpu->name,
                      gpu->memory_bytes / double(1ull << 30)));
    req.max_stages = model->block_count() + 2;  // the embedding and the head may be stages of their own
    if (!in.blocks_per_stage.empty()) req.only_stages = static_cast<std::uint32_t>(in.blocks_per_stage.size());
    if (!in.pipeline_layout.empty() && in.pipeline_layout != "auto") {  // its stage count: the shape it parses for
      for (std::uint32_t v : req.stages_per_rank) {
        try {
          parse_pipeline_layout(in.pipeline_layout, *model, req.ranks * v);
          // Its stage count, even above the blocks (embedding and head as stages: E|(t|)*22L).
          req.only_stages = req.max_stages = req.ranks * v;
          break;
        } catch (const ModelError&) {
        }
      }
      if (!req.only_stages) {
        print_error("--pipeline-layout gives no pipeline of " + std::to_string(req.ranks) +
                    " ranks x the stages per rank tried; `ppsched simulate --model` says why for one shape");
        return false;
      }
    }
  }
  if (in.model.empty() && (!in.costs.empty() || !in.stage_spec.empty())) {
    // A table or spec prices the stages it lists: only pipelines of that many stages.
    std::optional<std::uint32_t> stages;
    if (!in.costs.empty()) {
      DiagnosticSink sink;
      stages = cost_table_stage_count(in.costs, sink);
      print_diagnostics(sink);
      if (!stages) return false;
    } else {
      stages = stage_spec_stage_count(in.stage_spec);
    }
    if (stages) {  // else the spec's reader says why, with the place
      req.only_stages = *stages;
      sources.notes.push_back(fmt::format("{} describes {} stages: only shapes with {} stages are tried",
                                          in.costs.empty() ? in.stage_spec : in.costs, *stages, *stages));
    }
  }
  for (std::string& note : untried_shape_notes(req)) sources.notes.push_back(std::move(note));
  return true;
}

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
  if (result->found() && !opt.emit_best.empty() && !emit_best(opt, sources, result->trials.front())) return kExitUsage;
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
  sub->add_option("--ranks", opt->request.ranks, "Pipeline ranks")->required()->check(CLI::Range(1u, 4096u));
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
                  "Directory to write the winner into: schedule.csv (what torchtitan loads) and torchtitan.toml (the "
                  "settings that run it: schedule class, CSV, microbatch size, local batch, modules per stage)");
  sub->add_option("--time-budget", opt->request.time_budget_s,
                  "Budget of the whole command (every trial, the auto searches sharing what they leave), in seconds "
                  "of work at a nominal 10M simulated actions/s (default: 1 per auto search, 60 in all)")
      ->check(finite_positive());
  sub->add_option("--max-schedule-gib", opt->max_schedule_gib,
                  "Refuse a configuration whose largest schedule would hold more than this many GiB (default 4)")
      ->check(finite_positive());
  sub->footer(
      "Example:\n  ppsched tune --ranks 8 --global-batch 64 --model schedules/llama3-8b.model.json --gpu h100 "
      "--memory-cap 80GiB");
  commands.push_back({sub, [opt] { return run_tune(*opt); }});
}

}  // namespace ppsched::cli
