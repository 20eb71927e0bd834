// Tuned runs the framework faces' tests share (report/torchtitan_settings.hpp,
// report/megatron_args.hpp): a Llama-3-70B-like dense model on 128 GPUs and a DeepSeek-V3-like
// MoE on 256, with the shapes of the published models and layouts tune can pick. The unit tests
// and tests/tools/emit_settings.cpp (the script test's writer) read the same values.
#pragma once

#include <string>
#include <vector>

#include "report/run_settings.hpp"

namespace ppsched::test {

// `first` blocks after E, `middle` stages of `per` blocks, then `last` blocks and L.
inline std::vector<std::string> stage_layers(int first, int middle, int per, int last) {
  std::vector<std::string> out = {"E" + std::string(first, 't')};
  for (int i = 0; i < middle; ++i) out.emplace_back(per, 't');
  out.push_back(std::string(last, 't') + "L");
  return out;
}

/// 80 blocks, GQA 64/8 heads; pp 8 with 2 looped stages per rank, tp 8 with SP, FSDP over dp 2;
/// InterleavedZeroBubble from a CSV, 16 microbatches of 1, full recompute.
inline RunSettings llama3_70b_like() {
  RunSettings s;
  s.model_name = "llama3-70b-like";
  s.blocks = 80, s.hidden = 8192, s.ffn_hidden = 28672, s.heads = 64, s.kv_heads = 8, s.vocab = 128256;
  s.sequence_length = 8192;
  s.gpus = 128, s.pp = 8, s.stages_per_rank = 2, s.tp = 8, s.sequence_parallel = true, s.dp = 2;
  s.sharding = DataSharding::Full;
  s.family = "InterleavedZeroBubble";
  s.schedule_csv = "/runs/best/schedule.csv";
  s.microbatches = 16, s.microbatch_size = 1, s.global_batch = 32;
  s.recompute = RecomputeSetting::Full;
  s.stage_layers = stage_layers(4, 14, 5, 6);  // 4 + 70 + 6 = 80 blocks in 16 stages
  s.comments = {"ppsched tune's best: InterleavedZeroBubble, 2 stage(s) per rank, 16 microbatches of 1 sample(s)",
                "time model: pytorch (test)"};
  return s;
}

/// 61 blocks of 256 experts (top 8); pp 8 in a V (DualPipeV), no tp, FSDP over dp 32 kept gathered
/// after the forward, ep 32; 32 microbatches of 1, selective recompute.
inline RunSettings deepseek_v3_like() {
  RunSettings s;
  s.model_name = "deepseek-v3-like";
  s.blocks = 61, s.hidden = 7168, s.ffn_hidden = 18432, s.heads = 128, s.kv_heads = 128, s.vocab = 129280;
  s.sequence_length = 4096;
  s.experts = 256, s.top_k = 8, s.expert_ffn_hidden = 2048;
  s.gpus = 256, s.pp = 8, s.stages_per_rank = 2, s.v_placement = true, s.tp = 1, s.dp = 32;
  s.sharding = DataSharding::Full, s.reshard_after_forward = false, s.ep = 32;
  s.family = "DualPipeV";
  s.schedule_csv = "/runs/best/schedule.csv";
  s.microbatches = 32, s.microbatch_size = 1, s.global_batch = 1024;
  s.recompute = RecomputeSetting::Selective;
  s.stage_layers = stage_layers(3, 14, 4, 2);  // 3 + 56 + 2 = 61 blocks in 16 stages
  s.comments = {"ppsched tune's best: DualPipeV"};
  return s;
}

}  // namespace ppsched::test
