// The calibrated parameters of a runtime model: figures measured once per runtime and hardware,
// which the model's equations (docs/manual.md, "Runtime models") take as given. Plain data; the
// file a user can replace them with (`--runtime-params FILE`, docs/formats.md) is read in
// lib/parse (parse/runtime_params_json.hpp).
#pragma once

#include <string>

namespace ppsched {

struct RuntimeParams {
  std::string runtime = "megatron";  ///< the runtime the figures describe
  std::string hardware;              ///< what they were measured or calibrated on
  std::string source;                ///< where they come from (a paper, a measurement, a file)
  /// What one point-to-point call (one batch_isend_irecv, with its waits) costs the rank's compute
  /// stream, in microseconds, beyond the transfer itself.
  double p2p_call_overhead_us = 0;
  /// The streaming multiprocessors the NCCL kernel of an asynchronous call holds while it is in
  /// flight (from its issue until its last message has arrived): compute on that rank runs on the
  /// others, (sms - p2p_kernel_sms) / sms of its speed. 0: no slowdown. The synchronous executor
  /// never overlaps a call with compute, so only the Zero Bubble runtime pays it.
  double p2p_kernel_sms = 0;
  /// The GPU table's name of the device (model/gpu.hpp), whose SM count p2p_kernel_sms divides;
  /// needed when p2p_kernel_sms > 0.
  std::string gpu;
};

/// The figures ppsched ships for Megatron-LM on A100 SXM 80GB: calibrated on the Zero Bubble
/// paper's measured runs (docs/bench.md, "Runtime models against measured runs").
RuntimeParams megatron_a100_params();

}  // namespace ppsched
