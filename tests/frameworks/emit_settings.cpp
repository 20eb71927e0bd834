// The writer of tests/frameworks/frameworks_test.py: the faces of report/torchtitan_settings.hpp,
// report/megatron_args.hpp and report/torchtitan_toml.hpp on a sample run, into files Python
// then parses as torchtitan, Megatron-LM and sh would. Test-only; not installed.
//
//   ppsched_emit_settings OUTDIR llama3-70b|deepseek-v3 [--csv PATH] [--name NAME]
//                         [--sharding none|optimizer|gradients|full] [--recompute none|selective|full]
//                         [--sequence-parallel on|off] [--even-split 4] [--comment TEXT]...
//
// --even-split P re-lays the sample as P ranks of one stage each, blocks split evenly, 1F1B: the
// split Megatron makes without a layout.
// The first --comment replaces the sample's comments, so a test's comment can be the first line.
//
// OUTDIR gets settings.json (the sample's numbers, for Python's own checks), and per face either
// its files or <face>.refused holding the UserError's message: torchtitan_overrides.args and
// megatron_args.args (each argument followed by a NUL byte), ppsched_torchtitan_config.py,
// run_torchtitan.sh, run_megatron.sh, torchtitan.toml.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "ir/user_error.hpp"
#include "report/megatron_args.hpp"
#include "report/torchtitan_settings.hpp"
#include "report/torchtitan_toml.hpp"
#include "support/run_settings_samples.hpp"

namespace {

using namespace ppsched;

std::filesystem::path out_dir;

void write(const std::string& name, const std::string& text) {
  std::ofstream f(out_dir / name, std::ios::binary);
  f << text;
}

std::string nul_terminated(const std::vector<std::string>& args) {
  std::string out;
  for (const std::string& a : args) out += a + '\0';
  return out;
}

// Writes what `face` returns, or the refusal it throws as <name>.refused.
void emit(const std::string& name, const std::function<void()>& face) {
  try {
    face();
  } catch (const UserError& e) {
    write(name + ".refused", e.what());
  }
}

// The old TOML face's settings for the same run (torchtitan 0.2.2 named the head `output`).
TorchtitanSettings toml_settings(const RunSettings& s) {
  TorchtitanSettings t;
  t.pp_degree = s.pp;
  t.schedule_class = torchtitan_class_for(s.stages_per_rank, s.v_placement);
  t.csv_path = s.schedule_csv;
  t.microbatch_size = s.microbatch_size;
  t.local_batch_size = s.microbatches * s.microbatch_size;
  t.module_fqns = torchtitan_stage_modules(s);
  for (auto& stage : t.module_fqns)
    for (std::string& m : stage)
      if (m == "lm_head") m = "output";
  t.comments = s.comments;
  return t;
}

nlohmann::json numbers(const RunSettings& s) {
  return {{"blocks", s.blocks},
          {"hidden", s.hidden},
          {"ffn_hidden", s.ffn_hidden},
          {"heads", s.heads},
          {"kv_heads", s.kv_heads},
          {"sequence_length", s.sequence_length},
          {"experts", s.experts},
          {"top_k", s.top_k},
          {"gpus", s.gpus},
          {"pp", s.pp},
          {"stages_per_rank", s.stages_per_rank},
          {"v_placement", s.v_placement},
          {"tp", s.tp},
          {"sequence_parallel", s.sequence_parallel},
          {"dp", s.dp},
          {"sharding", static_cast<int>(s.sharding)},
          {"reshard_after_forward", s.reshard_after_forward},
          {"ep", s.ep},
          {"microbatches", s.microbatches},
          {"microbatch_size", s.microbatch_size},
          {"global_batch", s.global_batch},
          {"recompute", static_cast<int>(s.recompute)},
          {"stage_layers", s.stage_layers}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: ppsched_emit_settings OUTDIR llama3-70b|deepseek-v3 [options]\n";
    return 2;
  }
  out_dir = std::filesystem::absolute(argv[1]);
  const std::string sample = argv[2];
  RunSettings s = sample == "deepseek-v3" ? test::deepseek_v3_like() : test::llama3_70b_like();
  const std::string base = sample == "deepseek-v3" ? "deepseek_v3" : "llama3";
  const std::string function = sample == "deepseek-v3" ? "deepseek_v3_671b" : "llama3_70b";
  const std::vector<std::string> shardings = {"none", "optimizer", "gradients", "full"};
  const std::vector<std::string> recomputes = {"none", "selective", "full"};
  bool sample_comments = true;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--csv") s.schedule_csv = value;
    if (flag == "--name") s.model_name = value;
    if (flag == "--sequence-parallel") s.sequence_parallel = value == "on";
    if (flag == "--even-split") {
      s.pp = static_cast<std::uint32_t>(std::stoul(value)), s.stages_per_rank = 1, s.v_placement = false;
      s.dp = s.gpus / (s.pp * s.tp), s.family = "1F1B";
      s.microbatches = static_cast<std::uint32_t>(s.global_batch / (s.microbatch_size * s.dp));
      const int per = static_cast<int>(s.blocks / s.pp);
      s.stage_layers = test::stage_layers(per, static_cast<int>(s.pp) - 2, per, per);
    }
    if (flag == "--comment") {
      if (sample_comments) s.comments.clear(), sample_comments = false;
      s.comments.push_back(value);
    }
    for (std::size_t k = 0; k < shardings.size(); ++k)
      if (flag == "--sharding" && value == shardings[k]) s.sharding = static_cast<DataSharding>(k);
    for (std::size_t k = 0; k < recomputes.size(); ++k)
      if (flag == "--recompute" && value == recomputes[k]) s.recompute = static_cast<RecomputeSetting>(k);
  }
  std::filesystem::create_directories(out_dir);
  write("settings.json", numbers(s).dump(2) + "\n");
  emit("torchtitan", [&] {
    write("torchtitan_overrides.args", nul_terminated(torchtitan_overrides(s)));
    write("ppsched_torchtitan_config.py",
          torchtitan_config_registry(s, "torchtitan.models." + base + ".config_registry", function));
    write("run_torchtitan.sh", torchtitan_script(s, out_dir.string(), "ppsched_torchtitan_config"));
  });
  emit("megatron", [&] {
    write("megatron_args.args", nul_terminated(megatron_args(s)));
    write("run_megatron.sh", megatron_script(s));
  });
  emit("torchtitan_toml", [&] { write("torchtitan.toml", torchtitan_toml(toml_settings(s))); });
  return 0;
}
