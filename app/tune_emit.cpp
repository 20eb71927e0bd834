#include "tune_emit.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <functional>
#include <optional>

#include "cli_support.hpp"
#include "ir/user_error.hpp"
#include "parse/model_json.hpp"
#include "parse/pytorch_csv.hpp"
#include "report/megatron_args.hpp"
#include "report/run_settings.hpp"
#include "report/torchtitan_settings.hpp"
#include "report/torchtitan_toml.hpp"

namespace ppsched::cli {

namespace {

constexpr std::string_view kTorchtitan = "torchtitan", kTorchtitanToml = "torchtitan@0.2.2", kMegatron = "megatron";

using Outputs = std::vector<std::pair<std::string, std::function<void(ByteSink&)>>>;

// The torchtitan registry function the emitted one starts from: --torchtitan-config, or the one
// torchtitan's own registry has for the shipped models (torchtitan/models/*/config_registry.py at
// the pinned commit). Empty: none known.
std::pair<std::string, std::string> torchtitan_base(const TuneOptions& opt, const std::string& model_name) {
  if (!opt.torchtitan_config.empty()) {
    const auto colon = opt.torchtitan_config.rfind(':');
    if (colon == std::string::npos) return {};
    return {opt.torchtitan_config.substr(0, colon), opt.torchtitan_config.substr(colon + 1)};
  }
  static const std::pair<const char*, const char*> kKnown[] = {{"llama3-8b", "llama3:llama3_8b"},
                                                               {"llama3-70b", "llama3:llama3_70b"},
                                                               {"llama3-405b", "llama3:llama3_405b"},
                                                               {"deepseek-v3-like", "deepseek_v3:deepseek_v3_671b"}};
  for (const auto& [name, base] : kKnown)
    if (model_name == name) {
      const std::string b = base;
      const auto colon = b.find(':');
      return {"torchtitan.models." + b.substr(0, colon) + ".config_registry", b.substr(colon + 1)};
    }
  return {};
}

struct Prepared {
  const EmitCandidate* candidate = nullptr;
  Schedule schedule;
  RunSettings settings;
};

std::string describe(const Prepared& p) {
  const TuneTrial& t = *p.candidate->trial;
  return fmt::format("{} with {} v={} m={} b={}", layout_label(p.candidate->layout), t.family, t.stages_per_rank,
                     t.microbatches, t.microbatch_size);
}

// The settings of one candidate, with its schedule (the CSV is written to `csv`).
std::optional<Prepared> prepare(const TuneOptions& opt, const TuneSources& sources, const NetworkModel& model,
                                const EmitCandidate& c, const std::string& csv) {
  Prepared p;
  p.candidate = &c;
  p.schedule = tune_schedule_of(c.request, *c.trial);
  const std::uint32_t stages = c.layout.pp * c.trial->stages_per_rank;
  std::optional<ModelPartition> mp = load_model_partition(opt.inputs, stages, c.trial->microbatch_size);
  if (!mp) return std::nullopt;
  p.settings =
      run_settings_of(model, mp->partition, c.layout, c.gpus, *c.trial, p.schedule.placement.style == PlacementStyle::V,
                      csv, std::uint64_t(c.layout.dp) * c.trial->microbatches * c.trial->microbatch_size);
  p.settings.comments.push_back("ppsched tune's pick: " + describe(p));
  p.settings.comments.push_back("time model: " + sources.time_model);
  return p;
}

// Megatron runs its own schedules: 1F1B, or looped interleaved 1F1B.
bool megatron_runs(const RunSettings& s) {
  return s.pp == 1 || ((s.family == "1F1B" || s.family == "Interleaved1F1B") && !s.v_placement);
}

}  // namespace

std::vector<std::string> emit_frameworks(const TuneOptions& opt) {
  std::vector<std::string> out;
  if (opt.frameworks.empty()) {
    if (opt.inputs.model.empty()) return {std::string(kTorchtitanToml)};
    return {std::string(kTorchtitan), std::string(kMegatron)};
  }
  for (const std::string& f : opt.frameworks) {
    if (f != kTorchtitan && f != kTorchtitanToml && f != kMegatron) {
      print_error("--framework: unknown '" + f + "' (torchtitan, torchtitan@0.2.2, megatron)");
      return {};
    }
    if (f != kTorchtitanToml && opt.inputs.model.empty()) {
      print_error("--framework " + f + " writes the model's shape and layers: give --model (without one, only " +
                  std::string(kTorchtitanToml) + ", the pipeline alone)");
      return {};
    }
    if (f == kTorchtitanToml && opt.gpus) {
      print_error(
          "--framework torchtitan@0.2.2 writes the pipeline alone (tune --ranks): its TOML has no place "
          "for the tensor and data layout of --gpus");
      return {};
    }
    out.push_back(f);
  }
  return out;
}

bool emit_settings(const TuneOptions& opt, const TuneSources& sources, const std::vector<EmitCandidate>& ranked) {
  const std::vector<std::string> frameworks = emit_frameworks(opt);
  if (frameworks.empty()) return false;
  auto wants = [&](std::string_view f) {
    return std::find(frameworks.begin(), frameworks.end(), f) != frameworks.end();
  };
  if (std::error_code ec; std::filesystem::create_directories(opt.emit_best, ec), ec) {
    print_error("--emit-best " + opt.emit_best + ": cannot create the directory: " + ec.message());
    return false;
  }
  const std::filesystem::path dir = std::filesystem::absolute(opt.emit_best);
  const std::string csv = (dir / "schedule.csv").string();
  Outputs outputs;
  std::vector<std::string> written;
  std::optional<Prepared> for_torchtitan, for_megatron;
  if (wants(kTorchtitanToml)) {  // the older config system: the best pipeline, as it always was
    const EmitCandidate& best = ranked.front();
    Schedule schedule = tune_schedule_of(best.request, *best.trial);
    TorchtitanSettings t =
        tune_best_settings(best.request, sources, *best.trial, schedule.placement.style == PlacementStyle::V, csv);
    if (!opt.inputs.model.empty()) {
      auto mp = load_model_partition(opt.inputs, best.request.ranks * best.trial->stages_per_rank,
                                     best.trial->microbatch_size);
      if (!mp) return false;
      t.module_fqns = torchtitan_module_fqns(mp->model, mp->partition);
    }
    const std::string toml = torchtitan_toml(t);  // refuses what TOML cannot hold, before any write
    outputs.push_back({csv, [schedule](ByteSink& out) { write_pytorch_csv(schedule, out); }});
    outputs.push_back({(dir / "torchtitan.toml").string(), [toml](ByteSink& out) { out.write(toml); }});
    written.push_back("torchtitan.toml (torchtitan 0.2.2's TOML configs)");
  }
  if (wants(kTorchtitan) || wants(kMegatron)) {
    DiagnosticSink sink;
    std::optional<NetworkModel> model = read_model(opt.inputs.model, sink);
    print_diagnostics(sink);
    if (!model) return false;
    const auto [base_module, base_function] = torchtitan_base(opt, model->name);
    if (wants(kTorchtitan) && base_module.empty()) {
      print_error(
          "torchtitan's settings start from a config_registry function of the model; torchtitan has none "
          "known for '" +
          model->name + "': give --torchtitan-config MODULE:FUNCTION, or --framework megatron");
      return false;
    }
    std::vector<std::string> torchtitan_why, megatron_why;
    for (const EmitCandidate& c : ranked) {
      const bool torchtitan_done = for_torchtitan || !wants(kTorchtitan);
      const bool megatron_done = for_megatron || !wants(kMegatron);
      if (torchtitan_done && megatron_done) break;
      if (!c.fits) continue;
      std::optional<Prepared> p = prepare(opt, sources, *model, c, csv);
      if (!p) return false;
      if (wants(kTorchtitan) && !for_torchtitan) {
        const std::vector<std::string> no = torchtitan_refusals(p->settings);
        if (no.empty())
          for_torchtitan = p;
        else if (torchtitan_why.empty())
          torchtitan_why = no;
      }
      if (wants(kMegatron) && !for_megatron) {
        std::vector<std::string> no = megatron_violations(p->settings);
        if (!megatron_runs(p->settings))
          no.insert(no.begin(), "Megatron-LM has no " + p->settings.family + " schedule");
        if (no.empty())
          for_megatron = std::move(p);
        else if (megatron_why.empty())
          megatron_why = no;
      }
    }
    auto report = [&](std::string_view f, const std::optional<Prepared>& p, const std::vector<std::string>& why) {
      if (!p) {
        print_error(fmt::format("--emit-best: no candidate that fits runs on {}{}", f,
                                why.empty() ? std::string() : " (the best: " + why.front() + ")"));
        return false;
      }
      if (p->candidate != &ranked.front())
        print_note(fmt::format("{} runs {}, the fastest it can (the best: {})", f, describe(*p),
                               why.empty() ? std::string("another framework's") : why.front()));
      return true;
    };
    if (wants(kTorchtitan) && !report(kTorchtitan, for_torchtitan, torchtitan_why)) return false;
    if (wants(kMegatron) && !report(kMegatron, for_megatron, megatron_why)) return false;
    try {
      if (for_torchtitan) {
        const RunSettings& s = for_torchtitan->settings;
        const std::string py = torchtitan_config_registry(s, base_module, base_function);
        const std::string sh = torchtitan_script(s, dir.string(), "ppsched_torchtitan_config");
        outputs.push_back({csv, [sched = for_torchtitan->schedule](ByteSink& out) { write_pytorch_csv(sched, out); }});
        outputs.push_back({(dir / "ppsched_torchtitan_config.py").string(), [py](ByteSink& out) { out.write(py); }});
        outputs.push_back({(dir / "run_torchtitan.sh").string(), [sh](ByteSink& out) { out.write(sh); }});
        written.push_back("schedule.csv, ppsched_torchtitan_config.py and run_torchtitan.sh (torchtitan " +
                          std::string(kTorchtitanCommit.substr(0, 8)) + ")");
      }
      if (for_megatron) {
        const std::string sh = megatron_script(for_megatron->settings);
        outputs.push_back({(dir / "run_megatron.sh").string(), [sh](ByteSink& out) { out.write(sh); }});
        written.push_back("run_megatron.sh (Megatron-LM " + std::string(kMegatronCommit.substr(0, 8)) + ")");
      }
    } catch (const UserError& e) {
      print_error(std::string("--emit-best: ") + e.what());
      return false;
    }
  }
  write_outputs_together(outputs);
  for (const std::string& w : written) print_note("wrote " + opt.emit_best + ": " + w);
  return true;
}

}  // namespace ppsched::cli
