// Which layers of a NetworkModel each pipeline stage holds: a balanced split, Megatron's
// --pipeline-model-parallel-layout string, or an explicit count of blocks per stage.
//
// Stages are in pipeline order (stage s runs after stage s-1 in the forward), which is the model's
// layer order; on which rank a stage runs is the schedule's placement, not this file's business.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/gpu.hpp"
#include "model/network.hpp"

namespace ppsched {

/// Layer indices (into NetworkModel::layers) of each stage: contiguous, in stage order, every
/// layer exactly once. A stage may be empty only when a layout string says so.
struct Partition {
  std::vector<std::vector<std::uint32_t>> layers_of_stage;
};

/// The layers of one stage of a partition, as the stage-costs view names them: "embedding + 3
/// blocks", "2 moe blocks + head", "(empty)".
std::string stage_layers_label(const NetworkModel& m, const std::vector<std::uint32_t>& layers);

/// `--pipeline-layout auto`: the contiguous split into `stages` stages minimising the slowest
/// stage's F+I+W (+recompute) time for this microbatch size, the embedding on the first stage and
/// the head on the last, as real runs place them. Every stage holds a block where the blocks allow
/// it, unless a first stage of the embedding alone or a last stage of the head alone makes the
/// slowest stage strictly faster (the uneven end stages of Megatron's layouts and PyTorch's
/// split proposals); with more stages than blocks, up to blocks + 2, the embedding and the head
/// are stages of their own (E|(t|)*22L). Ties keep the earliest cut. Throws ModelError when
/// stages is 0 or more than block_count() + 2, or when a layer cannot be costed (layer_cost).
Partition balanced_partition(const NetworkModel& m, std::uint32_t stages, const GpuSpec* gpu,
                             std::uint32_t microbatch_size);

/// Megatron's --pipeline-model-parallel-layout string, e.g. "Et*3|(tt|)*29,m|L": E embedding,
/// t transformer block (Block or MoeBlock, in model order), L head and loss, '|' stage boundary,
/// X*n repeats one symbol (a layer letter or '|'), (group)*n repeats a group (one level, as
/// Megatron expands them), ',' is ignored anywhere. m (multi-token prediction) is refused: it is not
/// modelled. Empty stages are allowed, as Megatron allows them. The layout must use every layer of
/// the model once, in order, and give exactly `stages` stages (for Megatron, PP x VPP stages in
/// the string's order). Errors throw ModelError as "--pipeline-layout:COL: message" with COL the
/// 1-based column in `layout`, or "--pipeline-layout: message" for errors about the whole string.
Partition parse_pipeline_layout(std::string_view layout, const NetworkModel& m, std::uint32_t stages);

/// Blocks per stage, e.g. {9,8,8,7}: embedding joins stage 0, head the last stage. The size must
/// equal `stages` and the sum block_count(); a 0 leaves a stage with no block (stage 0 then holds
/// the embedding alone, the last stage the head alone). Throws ModelError otherwise.
Partition explicit_partition(const NetworkModel& m, const std::vector<std::uint32_t>& blocks_per_stage,
                             std::uint32_t stages);

}  // namespace ppsched
