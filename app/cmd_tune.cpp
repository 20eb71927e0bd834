// `ppsched tune`: which schedule to run. Every family that can run the configuration (and the
// automatic schedule) is synthesized for each microbatch count, simulated with the same timed
// model and memory accounting as `ppsched simulate`, and ranked: fitting schedules by iteration
// time, then those over the memory cap, then those that cannot run, each with a one-line reason.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_support.hpp"
#include "schedule_source.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "parse/pytorch_csv.hpp"
#include "sim/aggregate.hpp"
#include "sim/analysis.hpp"
#include "sim_inputs.hpp"
#include "synth/auto/auto_schedule.hpp"
#include "synth/synth.hpp"

namespace ppsched::cli {

namespace {

struct TuneOptions {
  std::uint32_t ranks = 0, microbatches = 0, global_batch = 0;
  double memory_cap = 0;
  SimInputOptions inputs;
  std::vector<std::string> families;
  std::string format = "text";
  std::string output = "-";
  std::string emit_best;
  double time_budget_s = 1.0;
  double max_schedule_gib = 4;
};

// One configuration to try: a family (or "auto"), its stages per rank, a microbatch count.
struct Trial {
  std::string family;
  std::uint32_t stages_per_rank = 1;
  std::uint32_t microbatches = 0;
  // results
  bool ran = false, fits = false;
  double makespan = 0, bubble = 0, peak = 0, comm_wait = 0;
  std::string note;  // why it cannot run, or where auto's schedule came from
  Schedule schedule;
};

std::vector<std::string> default_families() {
  return {"GPipe", "1F1B", "Interleaved1F1B", "ZBH1", "ZBH2", "InterleavedZeroBubble", "ZBVZeroBubble", "DualPipeV", "VHalf", "VMin", "auto"};
}

// The trials of one family: Interleaved families with 2..4 stages per rank, auto with 1 and 2.
std::vector<Trial> trials_of(const std::string& name, std::uint32_t m) {
  std::vector<Trial> out;
  auto trial = [&](std::string family, std::uint32_t v) {
    Trial t;
    t.family = std::move(family);
    t.stages_per_rank = v;
    t.microbatches = m;
    out.push_back(std::move(t));
  };
  if (name == "auto") {
    for (std::uint32_t v : {1u, 2u}) trial("auto", v);
    return out;
  }
  const Family* f = find_family(name);
  if (!f) return out;
  if (f->fixed_stages_per_rank) {
    trial(std::string(f->name), f->default_stages_per_rank);
  } else {
    for (std::uint32_t v = 2; v <= 4; ++v) trial(std::string(f->name), v);
  }
  return out;
}

class Tuner {
 public:
  explicit Tuner(const TuneOptions& opt) : opt_(opt) {}

  // Fills the trial's results; false on an input error already printed (cost file, topology).
  bool evaluate(Trial& t) {
    const PlacementStyle style = t.family == "auto" ? auto_placement(t.stages_per_rank) : find_family(t.family)->placement;
    const Placement placement = Placement::for_shape(style, opt_.ranks, t.stages_per_rank);
    const SimInputs* base = inputs_for(placement.stage_to_rank);
    if (!base) return false;
    // With --global-batch the costs and sizes are per sample: a microbatch of G/m samples costs
    // and holds G/m times as much (a linear model; small microbatches run less efficiently on
    // a real GPU, which a measured cost table per microbatch size would show).
    SimInputs scaled;
    const SimInputs* in = base;
    if (opt_.global_batch) {
      const double samples = double(opt_.global_batch) / t.microbatches;
      scaled = *base;
      for (auto& stage : scaled.sim.costs.per_stage)
        for (double& c : stage) c *= samples;
      scaled.memory = base->memory.scaled(samples, opt_.ranks,
                                          static_cast<std::uint32_t>(placement.stage_to_rank.size()));
      in = &scaled;
    }
    try {
      if (t.family == "auto") {
        AutoParams p;
        p.ranks = opt_.ranks;
        p.microbatches = t.microbatches;
        p.stages_per_rank = t.stages_per_rank;
        p.memory_cap = opt_.memory_cap;
        p.sim = in->sim;
        p.memory = in->memory;
        p.time_budget_s = opt_.time_budget_s;
        AutoResult r = auto_schedule(p);
        t.schedule = std::move(r.schedule);
        t.note = r.best.origin;
      } else {
        SynthParams p;
        p.ranks = opt_.ranks;
        p.microbatches = t.microbatches;
        p.stages_per_rank = t.stages_per_rank;
        t.schedule = synthesize(t.family, p);
      }
    } catch (const std::invalid_argument& e) {  // SynthError, or auto's "no schedule fits"
      t.note = e.what();
      return true;
    }
    try {
      SimAnalysis a = simulate_aggregates(t.schedule, t.schedule.placement.stage_to_rank, in->sim, in->memory);
      t.ran = true;
      t.makespan = a.makespan;
      t.bubble = a.bubble_global;
      t.peak = a.memory.max_peak();
      for (const RankUsage& u : a.ranks) t.comm_wait += u.comm_wait;
      t.fits = fits_under_cap(t.peak, opt_.memory_cap);
    } catch (const TimedDeadlock&) {
      t.note = "its schedule does not finish";
    }
    return true;
  }

 private:
  const SimInputs* inputs_for(const std::vector<std::uint32_t>& stage_to_rank) {
    auto it = inputs_.find(stage_to_rank);
    if (it == inputs_.end()) {
      auto in = load_sim_inputs(opt_.inputs, opt_.ranks, stage_to_rank);
      if (!in) return nullptr;
      it = inputs_.emplace(stage_to_rank, std::move(*in)).first;
    }
    return &it->second;
  }

  const TuneOptions& opt_;
  std::map<std::vector<std::uint32_t>, SimInputs> inputs_;
};

std::string shape(const Trial& t) { return fmt::format("v={} m={}", t.stages_per_rank, t.microbatches); }

// Fitting by time (then peak), then over the cap by time, then the ones that did not run.
void rank_trials(std::vector<Trial>& trials) {
  auto group = [](const Trial& t) { return t.ran ? (t.fits ? 0 : 1) : 2; };
  std::stable_sort(trials.begin(), trials.end(), [&](const Trial& a, const Trial& b) {
    if (group(a) != group(b)) return group(a) < group(b);
    if (!a.ran) return false;
    if (a.makespan != b.makespan) return a.makespan < b.makespan;
    return a.peak < b.peak;
  });
}

std::string verdict(const Trial& t, const Trial& best, double cap) {
  if (!t.ran) return "cannot run: " + t.note.substr(0, t.note.find('\n'));
  if (!t.fits) return fmt::format("over the cap: peak {:.4g} > {:.4g}", t.peak, cap);
  if (&t == &best) return "best";
  std::string why = fmt::format("{:+.1f}% time", 100.0 * (t.makespan / best.makespan - 1.0));
  if (t.bubble > best.bubble + 1e-9) why += fmt::format(", more bubble ({:.1f}% vs {:.1f}%)", 100 * t.bubble, 100 * best.bubble);
  if (t.comm_wait > best.comm_wait * 1.01 + 1e-9) why += ", more comm wait";
  if (t.makespan == best.makespan) why = fmt::format("ties the best; peak {:.4g} vs {:.4g}", t.peak, best.peak);
  return why;
}

int run_tune(const TuneOptions& opt) {
  if ((opt.microbatches == 0) == (opt.global_batch == 0)) {
    print_error("give either --microbatches M or --global-batch G");
    return kExitUsage;
  }
  std::vector<std::string> families = opt.families.empty() ? default_families() : opt.families;
  for (const std::string& f : families)
    if (f != "auto" && !find_family(f)) {
      print_error("--families: unknown schedule '" + f + "' (see ppsched list)");
      return kExitUsage;
    }
  std::vector<std::uint32_t> counts;
  if (opt.microbatches) {
    counts.push_back(opt.microbatches);
  } else {
    for (std::uint32_t m = 1; m <= opt.global_batch; ++m)
      if (opt.global_batch % m == 0) counts.push_back(m);
  }
  // The largest trial (4 stages per rank, the most microbatches) bounds the memory of them all.
  if (!within_size_budget(opt.ranks, 4, counts.back(), false, opt.max_schedule_gib, "--max-schedule-gib"))
    return kExitUsage;
  std::vector<Trial> trials;
  for (std::uint32_t m : counts)
    for (const std::string& f : families)
      for (Trial& t : trials_of(f == "auto" ? f : std::string(find_family(f)->name), m)) trials.push_back(std::move(t));
  Tuner tuner(opt);
  for (Trial& t : trials)
    if (!tuner.evaluate(t)) return kExitUsage;
  rank_trials(trials);
  const Trial& best = trials.front();
  const bool found = best.ran && best.fits;
  if (found && !opt.emit_best.empty())
    write_output(opt.emit_best, [&](ByteSink& out) { write_pytorch_csv(best.schedule, out); });

  write_output(opt.output, [&](ByteSink& out) {
    const std::string cap = opt.memory_cap > 0 ? fmt::format("{:.4g}", opt.memory_cap) : "none";
    if (opt.format == "json") {
      nlohmann::ordered_json j;
      j["schema_version"] = 1;
      j["input"] = {{"ranks", opt.ranks},
                    {"microbatches", opt.microbatches ? nlohmann::ordered_json(opt.microbatches) : nlohmann::ordered_json()},
                    {"global_batch", opt.global_batch ? nlohmann::ordered_json(opt.global_batch) : nlohmann::ordered_json()},
                    {"memory_cap", opt.memory_cap > 0 ? nlohmann::ordered_json(opt.memory_cap) : nlohmann::ordered_json()},
                    {"cost", cost_description(opt.inputs)},
                    {"costs_file", opt.inputs.costs},
                    {"topology", opt.inputs.topology},
                    {"stage_spec", opt.inputs.stage_spec}};
      auto& rows = j["results"] = nlohmann::ordered_json::array();
      for (std::size_t i = 0; i < trials.size(); ++i) {
        const Trial& t = trials[i];
        nlohmann::ordered_json row;
        row["rank"] = t.ran && t.fits ? nlohmann::ordered_json(i + 1) : nlohmann::ordered_json();
        row["schedule"] = t.family;
        row["stages_per_rank"] = t.stages_per_rank;
        row["microbatches"] = t.microbatches;
        row["ran"] = t.ran;
        row["fits"] = t.fits;
        if (t.ran) {
          row["iteration_time"] = t.makespan;
          row["bubble_ratio"] = t.bubble;
          row["peak_memory"] = t.peak;
        }
        row["verdict"] = verdict(t, best, opt.memory_cap);
        if (t.family == "auto" && t.ran) row["auto_origin"] = t.note;
        rows.push_back(std::move(row));
      }
      out.write(j.dump(2) + "\n");
      return;
    }
    out.write(fmt::format("# ppsched tune: {} ranks, {}, memory cap {} ({}), costs {}\n", opt.ranks,
                          opt.microbatches ? fmt::format("{} microbatches", opt.microbatches)
                                           : fmt::format("global batch {} (every microbatch count that divides it)", opt.global_batch),
                          cap,
                          !opt.inputs.stage_spec.empty() ? "bytes per rank"
                          : opt.global_batch            ? "samples of activation per rank"
                                                        : "microbatches of activation per rank",
                          opt.inputs.costs.empty() ? cost_description(opt.inputs) : opt.inputs.costs));
    out.write("# iteration time from the timed simulator; bubble = 1 - busy / (ranks x time); peak = activation memory\n");
    out.write(fmt::format("{:>4}  {:<22} {:<12} {:>12} {:>7} {:>9}  {}\n", "rank", "schedule", "shape", "iteration", "bubble",
                          "peak", "verdict"));
    for (std::size_t i = 0; i < trials.size(); ++i) {
      const Trial& t = trials[i];
      std::string pos = t.ran && t.fits ? std::to_string(i + 1) : "-";
      if (t.ran)
        out.write(fmt::format("{:>4}  {:<22} {:<12} {:>12.6g} {:>6.1f}% {:>9.4g}  {}\n", pos, t.family, shape(t), t.makespan,
                              100 * t.bubble, t.peak, verdict(t, best, opt.memory_cap)));
      else
        out.write(fmt::format("{:>4}  {:<22} {:<12} {:>12} {:>7} {:>9}  {}\n", pos, t.family, shape(t), "-", "-", "-",
                              verdict(t, best, opt.memory_cap)));
    }
    if (found && best.family == "auto") out.write("# auto's schedule came from: " + best.note + "\n");
    if (!found) out.write("# nothing fits the memory cap\n");
  });
  return found ? kExitOk : kExitFindings;
}

}  // namespace

void add_tune_command(CLI::App& app, std::vector<Command>& commands) {
  auto opt = std::make_shared<TuneOptions>();
  CLI::App* sub = app.add_subcommand("tune", "Find the best schedule for a model and cluster under a memory cap");
  sub->add_option("--ranks", opt->ranks, "Pipeline ranks")->required()->check(CLI::Range(1u, 4096u));
  sub->add_option("--microbatches", opt->microbatches, "Microbatches per iteration")->check(CLI::Range(1u, 1000000u));
  sub->add_option("--global-batch", opt->global_batch,
                  "Samples per iteration: every microbatch count that divides it is tried; costs and "
                  "activation sizes are then per sample and scale with the microbatch size")
      ->check(CLI::Range(1u, 1000000u));
  sub->add_option("--memory-cap", opt->memory_cap,
                  "Peak activation memory per rank (microbatches of activation, or bytes with a stage spec)")
      ->check(finite_positive());
  add_sim_input_options(*sub, opt->inputs);
  sub->add_option("--families", opt->families, "Families to compare (default: all that fit the shape, and auto)")
      ->delimiter(',');
  sub->add_option("--format", opt->format, "text (a ranked table) or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->option_text("text|json");
  sub->add_option("-o,--output", opt->output, "Where to write the table ('-' = stdout)");
  sub->add_option("--emit-best", opt->emit_best, "Write the winner's schedule as PyTorch CSV (what torchtitan loads)");
  sub->add_option("--time-budget", opt->time_budget_s, "Budget of each auto search, in seconds of work at a nominal 10M simulated actions/s (default 1)")
      ->check(finite_positive());
  sub->add_option("--max-schedule-gib", opt->max_schedule_gib,
                  "Refuse a configuration whose largest schedule would hold more than this many GiB (default 4)")
      ->check(finite_positive());
  commands.push_back({sub, [opt] { return run_tune(*opt); }});
}

}  // namespace ppsched::cli
