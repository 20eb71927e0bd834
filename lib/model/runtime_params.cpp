#include "model/runtime_params.hpp"

namespace ppsched {

RuntimeParams megatron_a100_params() {
  RuntimeParams p;
  p.runtime = "megatron";
  p.hardware = "A100 SXM 80GB, 8 per node (NVLink), RoCE between nodes";
  p.source = "calibrated on the Zero Bubble paper's measured Megatron-LM runs (arXiv 2401.10241, ICLR 2024)";
  p.p2p_call_overhead_us = 950;
  p.p2p_kernel_sms = 4;
  p.gpu = "a100";
  return p;
}

}  // namespace ppsched
