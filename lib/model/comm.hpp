// How long a transfer takes: the communication part of the cost model.
//
// A topology places ranks on nodes and nodes on slices; each class of link (inside a node,
// between nodes of a slice, between slices) has a latency and a bandwidth. A transfer's time is
// latency + bytes / bandwidth; between stages on the same rank it is 0. Bytes per microbatch
// come from the stage spec (activation sent forward, gradient sent backward); without one they
// are 0, so only latency counts, and without a topology every transfer is free.
//
// Plain data only: the topology and stage spec JSON files (docs/formats.md) are read in lib/parse
// (parse/topology_json.hpp, parse/stage_spec_json.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/recompute.hpp"

namespace ppsched {

/// One class of link: a transfer over it takes latency_us + bytes / bytes_per_us.
struct Link {
  double latency_us = 0;
  double bytes_per_us = 0;  ///< 0: infinite bandwidth
};

/// Where each rank sits (node, slice) and the link between any two ranks.
struct Topology {
  std::vector<std::uint32_t> node_of_rank;
  std::vector<std::uint32_t> slice_of_rank;
  Link intra_node, inter_node, inter_slice;

  const Link& link(std::uint32_t from, std::uint32_t to) const;
};

/// Per stage: what crosses its boundaries and what it holds, per microbatch.
struct StageSpec {
  double activation_bytes = 0;           ///< output sent to the next stage (SEND_F)
  double gradient_bytes = 0;             ///< input gradient sent to the previous stage (SEND_B)
  double activation_memory_bytes = 0;    ///< held from F until its backward (M_B); default activation_bytes
  double weight_grad_memory_bytes = -1;  ///< held from I until W (M_W); < 0: equal to M_B
  double weight_bytes = 0;
  struct Input {
    std::string name;
    bool keyword = false;
    bool requires_grad = true;
    /// false: not a tensor (FlexAttention's BlockMask, a config object); it has no requires_grad
    /// at all, and PyTorch's stage_backward_input fails reading it.
    bool tensor = true;
  };
  std::vector<Input> inputs;
  /// M_W as given, or M_B where it was not.
  double weight_grad_memory() const {
    return weight_grad_memory_bytes < 0 ? activation_memory_bytes : weight_grad_memory_bytes;
  }
  /// Activation checkpointing of the stage: its time (with_recompute) and what it holds
  /// (MemoryModel::from_stage_spec).
  Recompute recompute;
};

/// What the timed simulator needs to time a transfer: the topology and the stage spec, both
/// optional.
struct CommModel {
  std::optional<Topology> topology;
  std::vector<StageSpec> stages;  ///< empty: no stage spec

  /// The bytes one transfer of stage `stage`'s forward output (forward = true) or input gradient
  /// carries: the stage spec's activation_bytes or gradient_bytes; 0 without a stage spec.
  double message_bytes(std::uint32_t stage, bool forward) const {
    if (stage >= stages.size()) return 0.0;
    return forward ? stages[stage].activation_bytes : stages[stage].gradient_bytes;
  }

  /// Time to move stage `stage`'s forward output (forward = true) or input gradient from rank
  /// `from` to rank `to`.
  double transfer_time(std::uint32_t stage, bool forward, std::uint32_t from, std::uint32_t to) const;
};

}  // namespace ppsched
