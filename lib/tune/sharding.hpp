// How data-parallel replicas hold a model's state: ZeRO's stages. One home for the choice, which
// the layout search prices (tune/layouts.hpp) and the frameworks' settings write
// (report/run_settings.hpp).
#pragma once

#include <cstdint>
#include <string_view>

namespace ppsched {

enum class DataSharding : std::uint8_t {
  None,       ///< every replica holds everything (plain DDP)
  Optimizer,  ///< ZeRO-1: optimizer state sharded over the replicas (Megatron's distributed optimizer)
  Gradients,  ///< ZeRO-2: optimizer state and gradients sharded
  Full,       ///< ZeRO-3 / FSDP: parameters too, gathered before use (torchtitan's FSDP2)
};

/// "DDP", "ZeRO-1", "ZeRO-2", "FSDP".
std::string_view sharding_name(DataSharding s);

}  // namespace ppsched
