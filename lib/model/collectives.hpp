// How long a collective over a group of GPUs takes: the tensor-, data- and expert-parallel
// communication of `ppsched tune --gpus` (issue 46). Ring algorithms, as NCCL runs them at these
// sizes: each of the group's n members sends and receives (n - 1) / n of the data per phase over
// its own link (Link: latency and bytes per microsecond each way), one latency per step.
//   all-gather, reduce-scatter   (n - 1) / n x bytes / bandwidth + (n - 1) x latency
//   all-reduce                   twice that (a reduce-scatter, then an all-gather)
//   all-to-all                   (n - 1) / n x bytes / bandwidth + latency (every pair at once)
// `bytes` is the whole buffer: what all-reduce reduces, what all-gather assembles, what one
// member's all-to-all sends and receives. A group of 1 costs nothing.
#pragma once

#include <cstdint>

#include "model/comm.hpp"
#include "model/gpu.hpp"

namespace ppsched {

double all_gather_us(double bytes, std::uint32_t group, const Link& link);
double reduce_scatter_us(double bytes, std::uint32_t group, const Link& link);
double all_reduce_us(double bytes, std::uint32_t group, const Link& link);
double all_to_all_us(double bytes, std::uint32_t group, const Link& link);

/// The links of a GPU: inside its node (NVLink), between nodes (its NIC), with the latency of one
/// collective step on each (5 and 15 us: NCCL's small-message latencies on NVLink and InfiniBand,
/// a stated approximation).
Link scale_up_link(const GpuSpec& gpu);
Link scale_out_link(const GpuSpec& gpu);

}  // namespace ppsched
