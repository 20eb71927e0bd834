#include "report/torchtitan_toml.hpp"

#include <fmt/format.h>

#include "report/toml_text.hpp"

namespace ppsched {

std::vector<std::vector<std::string>> torchtitan_module_fqns(const NetworkModel& model, const Partition& partition) {
  std::vector<std::uint32_t> block_index(model.layers.size());
  std::uint32_t blocks = 0;
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    const LayerType type = model.layers[i].type;
    if (type == LayerType::Block || type == LayerType::MoeBlock) block_index[i] = blocks++;
  }
  std::vector<std::vector<std::string>> out;
  for (const auto& stage : partition.layers_of_stage) {
    auto& names = out.emplace_back();
    for (std::uint32_t layer : stage) {
      switch (model.layers.at(layer).type) {
        case LayerType::Embedding:
          names.push_back("tok_embeddings");
          break;
        case LayerType::Head:
          names.push_back("norm"), names.push_back("output");
          break;
        default:
          names.push_back("layers." + std::to_string(block_index[layer]));
      }
    }
  }
  return out;
}

std::string torchtitan_class_for(std::uint32_t stages_per_rank, bool v_placement) {
  if (v_placement) return "ZBVZeroBubble";
  return stages_per_rank == 1 ? "1F1B" : "Interleaved1F1B";
}

std::string torchtitan_toml(const TorchtitanSettings& s) {
  std::string out;
  for (const std::string& c : s.comments) out += toml_comment(c);  // they quote the user's files
  out += "[parallelism]\n";
  out += fmt::format("pipeline_parallel_degree = {}\n", s.pp_degree);
  out += "pipeline_parallel_schedule = " + toml_string(s.schedule_class, "the schedule class") + "\n";
  if (!s.csv_path.empty())
    out += "pipeline_parallel_schedule_csv = " + toml_string(s.csv_path, "the schedule's path") + "\n";
  out += fmt::format("pipeline_parallel_microbatch_size = {}\n", s.microbatch_size);
  if (!s.module_fqns.empty()) {
    out += "module_fqns_per_model_part = [\n";
    for (const auto& stage : s.module_fqns) {
      out += "  [";
      for (std::size_t i = 0; i < stage.size(); ++i) out += (i ? ", " : "") + toml_string(stage[i], "a module name");
      out += "],\n";
    }
    out += "]\n";
  }
  out += "\n[training]\n";
  out += fmt::format("local_batch_size = {}\n", s.local_batch_size);
  return out;
}

TorchtitanSettings tune_best_settings(const TuneRequest& request, const TuneSources& sources, const TuneTrial& best,
                                      bool v_placement, const std::string& csv_path) {
  TorchtitanSettings t;
  t.pp_degree = request.ranks;
  t.schedule_class = torchtitan_class_for(best.stages_per_rank, v_placement);
  t.csv_path = csv_path;
  t.microbatch_size = best.microbatch_size;
  t.local_batch_size = best.microbatches * best.microbatch_size;
  t.comments.push_back("ppsched tune's best: " + best.family + ", " + std::to_string(best.stages_per_rank) +
                       " stage(s) per rank, " + std::to_string(best.microbatches) + " microbatches of " +
                       std::to_string(best.microbatch_size) + " sample(s)");
  t.comments.push_back("time model: " + sources.time_model);
  t.comments.push_back(
      fmt::format("{} stage(s) per rank, {} stages in all: the class sets their placement, the CSV "
                  "their order{}",
                  best.stages_per_rank, request.ranks * best.stages_per_rank,
                  sources.model.empty() ? "" : ", module_fqns_per_model_part their layers"));
  if (sources.model.empty())
    t.comments.push_back("no --model: the layers of each stage are torchtitan's default split");
  return t;
}

}  // namespace ppsched
