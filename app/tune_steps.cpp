#include "tune_steps.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "cli_support.hpp"
#include "exit_codes.hpp"
#include "ir/user_error.hpp"
#include "parse/model_json.hpp"
#include "parse/pytorch_csv.hpp"
#include "parse/stage_count.hpp"
#include "report/layout_report.hpp"
#include "report/torchtitan_toml.hpp"
#include "tune/layouts.hpp"
#include "tune_emit.hpp"

namespace ppsched::cli {

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

int run_tune_gpus(TuneOptions& opt, const TuneSources& given) {
  const SimInputOptions& in = opt.inputs;
  if (in.model.empty() || in.gpu.empty() || !opt.request.global_batch) {
    print_error("--gpus prices every layout from the model's operations: give --model, --gpu and --global-batch");
    return kExitUsage;
  }
  if (opt.request.microbatches || !in.costs.empty() || !in.cost.empty() || !in.stage_spec.empty() ||
      !in.topology.empty() || (!in.pipeline_layout.empty() && in.pipeline_layout != "auto") ||
      !in.blocks_per_stage.empty() || opt.memory_model.liveness() || !opt.html.empty()) {
    print_error(
        "--gpus chooses the microbatches, the partition and the links itself and caps memory in bytes: it takes "
        "none of --microbatches, --cost, --costs, --stage-spec, --topology, a fixed --pipeline-layout, "
        "--blocks-per-stage or --memory-model pytorch-liveness; --html is not written for it yet");
    return kExitUsage;
  }
  DiagnosticSink sink;
  std::optional<NetworkModel> model = read_model(in.model, sink);
  print_diagnostics(sink);
  if (!model) return kExitUsage;
  const GpuSpec* gpu = find_gpu(in.gpu);
  if (!gpu) {
    print_error("--gpu: unknown accelerator '" + in.gpu + "'");
    return kExitUsage;
  }
  LayoutRequest r;
  r.gpus = opt.gpus;
  r.gpus_per_node = opt.gpus_per_node;
  r.global_batch = opt.request.global_batch;
  r.memory_cap = opt.request.memory_cap;
  r.schedules = opt.request;
  TuneSources sources = given;
  sources.model_name = model->name;
  set_doing(fmt::format("searching the layouts of {} GPUs", r.gpus));
  LayoutResult result;
  try {
    // A progress line where a person watches (a terminal), never in a log or a pipe.
    const bool terminal = isatty(fileno(stderr));
    result = tune_layouts(r, *model, *gpu, [&](std::size_t done, std::size_t total) {
      if (!terminal) return;
      std::fprintf(stderr, "\r# pipeline shapes priced: %zu of %zu%s", done, total, done == total ? "\n" : "");
      std::fflush(stderr);
    });
  } catch (const UserError& e) {
    print_error(e.what());
    return kExitUsage;
  } catch (const ModelError& e) {
    print_error(in.model + ": " + e.what());
    return kExitUsage;
  }
  if (result.found() && !opt.emit_best.empty()) {
    std::vector<EmitCandidate> ranked;
    for (const LayoutTrial& t : result.trials) {
      if (!t.ran) continue;
      EmitCandidate c{t.layout, r.gpus, &t.schedule, opt.request, t.fits};
      c.request.ranks = t.layout.pp;
      ranked.push_back(std::move(c));
    }
    if (!emit_settings(opt, sources, ranked)) return kExitUsage;
  }
  write_output(opt.output, [&](ByteSink& out) {
    out.write(opt.format == "json" ? layout_json(r, sources, result) : layout_text(r, sources, result));
  });
  return result.found() ? kExitOk : kExitFindings;
}

}  // namespace ppsched::cli
