#include "report/run_settings.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ppsched {

std::vector<std::string> stage_layers_problems(const RunSettings& s) {
  std::vector<std::string> out;
  const auto& stages = s.stage_layers;
  if (stages.empty()) return out;
  const std::uint64_t want = std::uint64_t{s.pp} * s.stages_per_rank;
  if (stages.size() != want)
    out.push_back(fmt::format("the layout has {} stages, not pp x stages per rank = {}", stages.size(), want));
  std::uint64_t blocks = 0;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const std::string& st = stages[i];
    if (st.empty()) out.push_back(fmt::format("stage {} holds no layer", i));
    if (st.find_first_not_of("EtL") != std::string::npos)
      out.push_back(fmt::format("stage {} has a layer other than E, t and L", i));
    blocks += static_cast<std::uint64_t>(std::count(st.begin(), st.end(), 't'));
    const auto e = st.find('E'), l = st.find('L');
    if (e != std::string::npos && (i != 0 || e != 0 || st.find('E', 1) != std::string::npos))
      out.push_back(fmt::format("stage {} holds an embedding other than as the first layer of stage 0", i));
    if (l != std::string::npos && (i + 1 != stages.size() || l + 1 != st.size() || st.rfind('L') != l))
      out.push_back(fmt::format("stage {} holds a head other than as the last layer of the last stage", i));
  }
  if (stages.front().empty() || stages.front().front() != 'E') out.push_back("the first stage does not start with E");
  if (stages.back().empty() || stages.back().back() != 'L') out.push_back("the last stage does not end with L");
  if (s.blocks != 0 && blocks != s.blocks)
    out.push_back(fmt::format("the layout holds {} blocks, the model {}", blocks, s.blocks));
  return out;
}

DataSharding effective_sharding(const RunSettings& s) { return s.dp > 1 ? s.sharding : DataSharding::None; }

RunSettings run_settings_of(const NetworkModel& m, const Partition& partition, const ParallelLayout& layout,
                            std::uint32_t gpus, const TuneTrial& trial, bool v_placement, std::string schedule_csv,
                            std::uint64_t global_batch) {
  RunSettings s;
  s.model_name = m.name;
  s.blocks = m.block_count();
  s.hidden = m.hidden;
  s.ffn_hidden = m.ffn_hidden;
  s.heads = m.heads;
  s.kv_heads = m.kv_heads ? m.kv_heads : m.heads;
  s.vocab = m.vocab;
  s.sequence_length = m.sequence_length;
  s.swiglu = m.mlp == MlpKind::SwiGlu;
  s.tied_embeddings = m.tied_embeddings;
  const bool moe =
      std::any_of(m.layers.begin(), m.layers.end(), [](const Layer& l) { return l.type == LayerType::MoeBlock; });
  if (moe) {
    s.experts = m.moe.experts;
    s.top_k = m.moe.top_k;
    s.expert_ffn_hidden = m.moe.expert_ffn_hidden;
  }
  s.gpus = gpus;
  s.pp = layout.pp;
  s.stages_per_rank = trial.stages_per_rank;
  s.v_placement = v_placement;
  s.tp = layout.tp;
  s.sequence_parallel = layout.sequence_parallel;
  s.dp = layout.dp;
  s.sharding = layout.sharding;
  s.reshard_after_forward = layout.pp == 1;
  s.ep = layout.ep;
  s.family = trial.family;
  s.schedule_csv = std::move(schedule_csv);
  s.microbatches = trial.microbatches;
  s.microbatch_size = trial.microbatch_size;
  s.global_batch = global_batch;
  s.recompute = m.recompute == Recompute::Mode::Full        ? RecomputeSetting::Full
                : m.recompute == Recompute::Mode::Selective ? RecomputeSetting::Selective
                                                            : RecomputeSetting::None;
  for (const auto& stage : partition.layers_of_stage) {
    std::string letters;
    for (std::uint32_t layer : stage) {
      const LayerType t = m.layers.at(layer).type;
      letters += t == LayerType::Embedding ? 'E' : t == LayerType::Head ? 'L' : 't';
    }
    s.stage_layers.push_back(std::move(letters));
  }
  return s;
}

}  // namespace ppsched
