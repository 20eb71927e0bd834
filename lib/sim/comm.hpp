// How long a transfer takes: the communication part of the cost model.
//
// A topology places ranks on nodes and nodes on slices; each class of link (inside a node,
// between nodes of a slice, between slices) has a latency and a bandwidth. A transfer's time is
// latency + bytes / bandwidth; between stages on the same rank it is 0. Bytes per microbatch
// come from the stage spec (activation sent forward, gradient sent backward); without one they
// are 0, so only latency counts, and without a topology every transfer is free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diag/diagnostic.hpp"

namespace ppsched {

struct Link {
  double latency_us = 0;
  double bytes_per_us = 0;  ///< 0: infinite bandwidth
};

struct Topology {
  std::vector<std::uint32_t> node_of_rank;
  std::vector<std::uint32_t> slice_of_rank;
  Link intra_node, inter_node, inter_slice;

  const Link& link(std::uint32_t from, std::uint32_t to) const;
};

/// Per stage: what crosses its boundaries and what it holds, per microbatch.
struct StageSpec {
  double activation_bytes = 0;  ///< output sent to the next stage (SEND_F)
  double gradient_bytes = 0;    ///< input gradient sent to the previous stage (SEND_B)
  double activation_memory_bytes = 0;   ///< held from F until its backward (M_B); default activation_bytes
  double weight_grad_memory_bytes = -1;  ///< held from I until W (M_W); < 0: equal to M_B
  double weight_bytes = 0;
  struct Input {
    std::string name;
    bool keyword = false;
    bool requires_grad = true;
  };
  std::vector<Input> inputs;
};

struct CommModel {
  std::optional<Topology> topology;
  std::vector<StageSpec> stages;  ///< empty: no stage spec

  /// Time to move stage `stage`'s forward output (forward = true) or input gradient from rank
  /// `from` to rank `to`.
  double transfer_time(std::uint32_t stage, bool forward, std::uint32_t from, std::uint32_t to) const;
};

/// Reads a topology JSON (docs/formats.md); every rank 0..ranks-1 must be on exactly one node.
std::optional<Topology> read_topology(const std::string& path, std::uint32_t ranks, DiagnosticSink& sink);

/// Reads a stage spec JSON (docs/formats.md) for a schedule of `num_stages` stages.
std::optional<std::vector<StageSpec>> read_stage_spec(const std::string& path, std::uint32_t num_stages,
                                                      DiagnosticSink& sink);

/// The same two readers on text in memory, reported as file `name` (the fuzz targets use these).
std::optional<Topology> read_topology_text(std::string_view name, std::string_view text, std::uint32_t ranks,
                                           DiagnosticSink& sink);
std::optional<std::vector<StageSpec>> read_stage_spec_text(std::string_view name, std::string_view text,
                                                           std::uint32_t num_stages, DiagnosticSink& sink);

}  // namespace ppsched
