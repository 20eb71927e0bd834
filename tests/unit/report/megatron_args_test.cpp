#include "report/megatron_args.hpp"

#include "ir/user_error.hpp"
#include "model/partition.hpp"
#include "support/catch.hpp"
#include "support/model_shapes.hpp"
#include "support/run_settings_samples.hpp"

namespace ppsched {
namespace {

using Args = std::vector<std::string>;

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST_CASE("megatron_args: a Llama-3-70B-like run, GQA, its own layout, Megatron-FSDP, full recompute") {
  const RunSettings s = test::llama3_70b_like();
  CHECK(megatron_violations(s).empty());
  CHECK(megatron_layout(s) == "Et*4|" + repeat("t*5|", 14) + "t*6L");
  CHECK(megatron_args(s) == Args{"--num-layers",
                                 "80",
                                 "--hidden-size",
                                 "8192",
                                 "--ffn-hidden-size",
                                 "28672",
                                 "--num-attention-heads",
                                 "64",
                                 "--group-query-attention",
                                 "--num-query-groups",
                                 "8",
                                 "--swiglu",
                                 "--untie-embeddings-and-output-weights",
                                 "--seq-length",
                                 "8192",
                                 "--max-position-embeddings",
                                 "8192",
                                 "--tensor-model-parallel-size",
                                 "8",
                                 "--sequence-parallel",
                                 "--pipeline-model-parallel-size",
                                 "8",
                                 "--pipeline-model-parallel-layout",
                                 megatron_layout(s),
                                 "--micro-batch-size",
                                 "1",
                                 "--global-batch-size",
                                 "32",
                                 "--bf16",
                                 "--use-distributed-optimizer",
                                 "--use-megatron-fsdp",
                                 "--data-parallel-sharding-strategy",
                                 "optim_grads_params",
                                 "--ckpt-format",
                                 "fsdp_dtensor",
                                 "--recompute-granularity",
                                 "full",
                                 "--recompute-method",
                                 "uniform",
                                 "--recompute-num-layers",
                                 "1"});
}

TEST_CASE("megatron_args: a DeepSeek-V3-like MoE, experts and expert parallel, selective recompute") {
  const RunSettings s = test::deepseek_v3_like();
  CHECK(megatron_violations(s).empty());
  CHECK(megatron_args(s) == Args{"--num-layers",
                                 "61",
                                 "--hidden-size",
                                 "7168",
                                 "--ffn-hidden-size",
                                 "18432",
                                 "--num-attention-heads",
                                 "128",
                                 "--swiglu",
                                 "--untie-embeddings-and-output-weights",
                                 "--seq-length",
                                 "4096",
                                 "--max-position-embeddings",
                                 "4096",
                                 "--num-experts",
                                 "256",
                                 "--moe-router-topk",
                                 "8",
                                 "--moe-ffn-hidden-size",
                                 "2048",
                                 "--expert-model-parallel-size",
                                 "32",
                                 "--tensor-model-parallel-size",
                                 "1",
                                 "--pipeline-model-parallel-size",
                                 "8",
                                 "--pipeline-model-parallel-layout",
                                 "Et*3|" + repeat("t*4|", 14) + "ttL",
                                 "--micro-batch-size",
                                 "1",
                                 "--global-batch-size",
                                 "1024",
                                 "--bf16",
                                 "--use-distributed-optimizer",
                                 "--use-megatron-fsdp",
                                 "--data-parallel-sharding-strategy",
                                 "optim_grads_params",
                                 "--ckpt-format",
                                 "fsdp_dtensor",
                                 "--recompute-granularity",
                                 "selective"});
}

TEST_CASE("megatron_args: tensor parallel leaves the experts whole, as ppsched prices them") {
  RunSettings s = test::deepseek_v3_like();
  s.tp = 8, s.dp = 4, s.ep = 32, s.global_batch = 128, s.sequence_parallel = true;
  const Args a = megatron_args(s);
  const auto etp = std::find(a.begin(), a.end(), "--expert-tensor-parallel-size");
  REQUIRE(etp != a.end());
  CHECK(*(etp + 1) == "1");
  CHECK(std::find(a.begin(), a.end(), "--sequence-parallel") != a.end());
}

TEST_CASE("megatron_layout: left out for Megatron's own even split, else t*N runs in stage order") {
  RunSettings s = test::llama3_70b_like();
  s.pp = 4, s.stages_per_rank = 1, s.dp = 4, s.microbatches = 8;
  s.stage_layers = {"E" + std::string(20, 't'), std::string(20, 't'), std::string(20, 't'), std::string(20, 't') + "L"};
  CHECK(megatron_layout(s).empty());
  const Args a = megatron_args(s);
  CHECK(std::find(a.begin(), a.end(), "--pipeline-model-parallel-layout") == a.end());
  s.stage_layers = {"E", std::string(40, 't'), std::string(38, 't') + "tt", "L"};  // E and L on stages of their own
  CHECK(megatron_layout(s) == "E|t*40|t*40|L");
  s.stage_layers = {"Et", "t", "t" + std::string(77, 't'), "tL"};
  CHECK(megatron_layout(s) == "Et|t|t*78|tL");
  s.stage_layers.clear();  // not known: the default split, which this run is
  CHECK(megatron_layout(s).empty());
}

// ppsched's own reader of Megatron's grammar (model/partition.hpp) takes back what the writer wrote.
TEST_CASE("megatron_layout: ppsched's reader of Megatron's layouts reads back the stages written") {
  for (const RunSettings& s : {test::llama3_70b_like(), test::deepseek_v3_like()}) {
    NetworkModel m = test::llama3_8b();  // a valid model; its layers replaced by the run's
    m.layers.clear();
    m.layers.push_back({LayerType::Embedding, {}});
    for (std::uint64_t b = 0; b < s.blocks; ++b) m.layers.push_back({LayerType::Block, {}});
    m.layers.push_back({LayerType::Head, {}});
    const Partition p = parse_pipeline_layout(megatron_layout(s), m, s.pp * s.stages_per_rank);
    std::vector<std::string> stages;
    for (const auto& layers : p.layers_of_stage) {
      std::string& st = stages.emplace_back();
      for (std::uint32_t l : layers) st += l == 0 ? 'E' : l + 1 == m.layers.size() ? 'L' : 't';
    }
    CHECK(stages == s.stage_layers);
  }
}

TEST_CASE("megatron_args: ZeRO-1 is the distributed optimizer, ZeRO-2 Megatron-FSDP's optim_grads") {
  RunSettings s = test::llama3_70b_like();
  auto tail = [&](std::size_t n) {
    const Args a = megatron_args(s);
    return Args(a.end() - static_cast<std::ptrdiff_t>(n), a.end());
  };
  s.recompute = RecomputeSetting::None;
  s.sharding = DataSharding::Optimizer;
  CHECK(tail(2) == Args{"--bf16", "--use-distributed-optimizer"});
  s.sharding = DataSharding::Gradients;
  CHECK(tail(6) == Args{"--use-distributed-optimizer", "--use-megatron-fsdp", "--data-parallel-sharding-strategy",
                        "optim_grads", "--ckpt-format", "fsdp_dtensor"});
  s.sharding = DataSharding::None;
  CHECK(tail(1) == Args{"--bf16"});
  s.sharding = DataSharding::Full, s.dp = 1, s.gpus = 64, s.global_batch = 16;  // one replica: nothing to shard
  CHECK(tail(1) == Args{"--bf16"});
}

TEST_CASE("megatron_script: comments, notes, then torchrun with the arguments quoted") {
  RunSettings s = test::llama3_70b_like();
  s.model_name = "m\n--evil $(x)";
  const std::string sh = megatron_script(s);
  CHECK(sh.rfind("#!/bin/sh\n# Written by ppsched tune --emit-best: a Megatron-LM run (Megatron-LM d98e8a64)", 0) == 0);
  CHECK(sh.find("\n# model: m\\x0A--evil $(x)\n") != std::string::npos);
  CHECK(sh.find("\n# note: Megatron-LM's schedules are 1F1B and interleaved (looped) 1F1B;") != std::string::npos);
  CHECK(sh.find("\ntorchrun $TORCHRUN_ARGS pretrain_gpt.py --num-layers 80 ") != std::string::npos);
  CHECK(sh.find(" --pipeline-model-parallel-layout 'Et*4|t*5|") != std::string::npos);
  CHECK(sh.ends_with(" --recompute-num-layers 1 \"$@\"\n"));
}

TEST_CASE("megatron_args: settings Megatron would reject are refused, saying why") {
  RunSettings s = test::llama3_70b_like();
  s.heads = 60;
  CHECK_THROWS_WITH(megatron_args(s),
                    "Megatron-LM (d98e8a64) cannot run these settings: 60 attention heads are not a multiple of "
                    "tensor parallel 8; the hidden size 8192 is not a multiple of the 60 heads");
  CHECK_THROWS_AS(megatron_script(s), UserError);
}

}  // namespace
}  // namespace ppsched
