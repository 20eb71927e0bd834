// The topology file (JSON, docs/formats.md): which node each rank is on, which slice each node is
// in, and each link class's latency and bandwidth. Read for `--topology`; the Topology it gives is
// plain data (model/comm.hpp).
//
// Every problem is reported with file:line:col of the value and its JSON path ("$.nodes[1][0]"),
// rule id topology-file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "diag/diagnostic.hpp"
#include "io/byte_sink.hpp"
#include "model/comm.hpp"

namespace ppsched {

/// Reads a topology JSON file ("-" for standard input); every rank 0..ranks-1 must be on exactly
/// one node. Problems go to `sink`; nullopt on any.
std::optional<Topology> read_topology(const std::string& path, std::uint32_t ranks, DiagnosticSink& sink);

/// Writes `t` as a topology file that read_topology reads back (`ppsched run --topology-out`: the
/// measured one). A link without a bandwidth (0: not measured, infinite to the simulator) is
/// written as 1e6 GB/s, since the file requires a positive figure.
void write_topology(const Topology& t, ByteSink& out);

/// The same on text in memory, reported as file `name` (the fuzz targets use it).
std::optional<Topology> read_topology_text(std::string_view name, std::string_view text, std::uint32_t ranks,
                                           DiagnosticSink& sink);

}  // namespace ppsched
