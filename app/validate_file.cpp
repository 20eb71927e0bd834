#include "validate_file.hpp"

#include "check/expectations.hpp"
#include "cli_support.hpp"
#include "diag/source_snippets.hpp"
#include "io/input_file.hpp"
#include "ir/user_error.hpp"
#include "model/cost_coverage.hpp"
#include "model/costs.hpp"
#include "parse/cost_table.hpp"
#include "parse/schedule_reader.hpp"
#include "parse/stage_spec_json.hpp"
#include "synth/synth.hpp"

namespace ppsched::cli {

namespace {

// What a readable file is checked against: what the flags say, the rest read off the file (each
// guess noted in `inferred`); nullopt, having said why, when the flags cannot be read or hold.
std::optional<CheckContext> make_context(const ValidateOptions& opt, const ParsedSchedule& p, const std::string& name,
                                         std::vector<Inference>& inferred) {
  Expectations want{.ranks = opt.ranks, .stages_per_rank = opt.stages_per_rank, .microbatches = opt.microbatches};
  want.expect_compute_only = opt.expect == "compute-only";
  if (const auto runtime = opt.schedule.empty() ? std::nullopt : runtime_class(opt.schedule)) {
    // As torchtitan runs a file: a single-stage class holds one stage per rank; a multi-stage one
    // takes the placement from the file, so nothing more is pinned.
    if (*runtime == RuntimeClass::Single && !want.stages_per_rank) want.stages_per_rank = 1;
  } else if (!opt.schedule.empty()) {
    const Family* f = find_family(opt.schedule);
    if (!f) {
      print_error(unknown_schedule_message(opt.schedule));
      return std::nullopt;
    }
    if (!want.stages_per_rank) want.stages_per_rank = f->default_stages_per_rank;
    want.style = f->placement;
  }
  try {
    parse_placement(opt.placement, want);
    ResolvedContext resolved = resolve_context(p.schedule, &p.source, name, want, p.shape);
    inferred = std::move(resolved.inferred);
    return std::move(resolved.context);
  } catch (const UserError& e) {  // not a placement, or a v placement the stages do not allow
    print_error(e.what());
    return std::nullopt;
  }
}

}  // namespace

std::optional<FileDiagnostics> validate_file(const ValidateOptions& opt, const ValidateRun& run,
                                             const std::string& file) {
  DiagnosticSink sink;
  ScheduleReadOptions read_opt;
  read_opt.format = *schedule_format_from_name(opt.input_format);
  read_opt.lenient = opt.lenient;
  read_opt.dialect = opt.dialect == "pre-2.6" ? ActionDialect::Pre26 : ActionDialect::Current;
  auto parsed = read_schedule(file, read_opt, sink);
  FileDiagnostics f;
  f.file = display_name(file);
  f.readable = parsed.has_value();
  std::optional<CheckContext> ctx;
  if (parsed) {
    ctx = make_context(opt, *parsed, display_name(file), f.inferred);
    if (!ctx) return std::nullopt;
    std::optional<std::vector<StageSpec>> spec;
    if (!opt.stage_spec.empty()) {
      spec = read_stage_spec(opt.stage_spec, ctx->stages, sink);
      if (!spec) {
        print_diagnostics(sink);
        return std::nullopt;
      }
      ctx->stage_spec = &*spec;
    }
    ctx->pytorch_filters_non_grad_inputs = run.pytorch_filters_non_grad_inputs;
    ctx->send_mode = run.send_mode;
    ctx->p2p_queues = run.p2p_queues;
    ctx->max_bubble = opt.max_bubble;
    ctx->bubble_per_stage = opt.bubble_definition == "per-stage";
    ctx->max_memory = opt.max_memory;
    ctx->memory_liveness = opt.memory_model.liveness();
    std::optional<CostModel> costs;
    if (!opt.costs.empty()) {
      costs = CostModel::for_pipeline(ctx->ranks, ctx->stages);
      CostCoverage given;
      CostNeeds needs;
      needs.kinds = compute_kinds_by_stage(*ctx->schedule, ctx->stages);
      needs.filled_with = "the unit costs";
      if (!read_cost_file(opt.costs, *costs, sink, &given) ||
          !check_cost_coverage(display_name(opt.costs), given, needs, opt.fill == "unit", sink)) {
        print_diagnostics(sink);
        return std::nullopt;
      }
      ctx->costs = &*costs;
    }
    run_checks(*ctx, sink, run.levels);
  }
  f.diagnostics = sink.diagnostics();
  if (file != "-" && needs_snippets(f.diagnostics)) {  // a clean file is not read twice
    try {
      fill_snippets(f.diagnostics, read_whole_input(file, std::size_t{1} << 30));
    } catch (const IoError&) {
    }
  }
  count_findings(f, opt.werror);
  return f;
}

}  // namespace ppsched::cli
