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

}  // namespace ppsched
