// megatron_violations and megatron_notes (lib/report/megatron_checks.cpp).
#include "report/megatron_args.hpp"
#include "support/catch.hpp"
#include "support/run_settings_samples.hpp"

namespace ppsched {
namespace {

using Lines = std::vector<std::string>;

TEST_CASE("megatron_violations: the shape and the layout against Megatron's rules") {
  RunSettings s = test::llama3_70b_like();
  s.gpus = 120;
  s.kv_heads = 6;
  s.stage_layers.back() = "ttttttt";
  CHECK(megatron_violations(s) == Lines{"pp x tp x dp = 8 x 8 x 2 is not the run's 120 GPUs",
                                        "6 query groups are neither a multiple nor a divisor of tensor parallel 8",
                                        "the last stage does not end with L",
                                        "the layout holds 81 blocks, the model 80"});
  s = test::llama3_70b_like();
  s.pp = 1, s.gpus = 16;
  s.stage_layers = {"E" + std::string(40, 't'), std::string(40, 't') + "L"};
  CHECK(megatron_violations(s) ==
        Lines{"interleaved stages need a pipeline of 2 ranks or more (overlapped p2p communication)"});
  s = test::llama3_70b_like();
  s.stage_layers.clear();
  CHECK(megatron_violations(s) ==
        Lines{"without the layers of each stage Megatron splits 80 blocks evenly over 8 ranks, one stage each, which "
              "these settings are not: tune with a model file"});
  s = RunSettings{};
  CHECK(megatron_violations(s) ==
        Lines{"Megatron needs the model's shape (layers, hidden and FFN sizes, heads, sequence length), which these "
              "settings do not have: tune with a model file"});
}

TEST_CASE("megatron_violations: batches Megatron would divide otherwise than the schedule") {
  RunSettings s = test::llama3_70b_like();
  s.global_batch = 33;
  CHECK(megatron_violations(s) == Lines{"the global batch 33 is not a multiple of micro batch x dp = 2"});
  s.global_batch = 64;  // 32 microbatches per pipeline; the schedule has 16 (torchtitan would accumulate twice)
  CHECK(megatron_violations(s) ==
        Lines{"Megatron would run global batch / (micro batch x dp) = 32 microbatches through the pipeline, the "
              "schedule 16"});
}

TEST_CASE("megatron_violations: experts against expert parallel") {
  RunSettings s = test::deepseek_v3_like();
  s.ep = 24, s.top_k = 300;
  CHECK(megatron_violations(s) == Lines{"256 experts are not a multiple of expert parallel 24",
                                        "expert parallel 24 does not divide dp x tp = 32",
                                        "the router's top-k 300 is not between 1 and the 256 experts"});
  s = test::llama3_70b_like();
  s.ep = 2;
  CHECK(megatron_violations(s) == Lines{"expert parallel needs --num-experts, and the model has no experts"});
}

TEST_CASE("megatron_notes: a V and a zero-bubble order are said to be lost, never silently") {
  const Lines ds = megatron_notes(test::deepseek_v3_like());
  CHECK(ds == Lines{"Megatron-LM's schedules are 1F1B and interleaved (looped) 1F1B; it has no zero-bubble, V-shaped "
                    "or DualPipeV schedule and reads no schedule file. It runs interleaved 1F1B on this layout, not "
                    "the order of DualPipeV that ppsched timed",
                    "the V placement is lost too: Megatron puts virtual stage s on pipeline rank s mod pp, so the "
                    "stages of the layout are looped",
                    "Megatron-FSDP needs CUDA_DEVICE_MAX_CONNECTIONS unset or above 1 and the adam or sgd optimizer, "
                    "and saves checkpoints as fsdp_dtensor",
                    "Megatron-FSDP has no setting that keeps parameters gathered from forward to backward (torch "
                    "FSDP2's needs pp 1 and ep 1): it gathers them again for the backward",
                    "every block is an MoE layer unless --moe-layer-freq says which are dense; the settings do not",
                    "not set here: data, tokenizer (vocabulary 129280), optimizer, learning rate, iterations, and "
                    "what the settings do not describe (position embedding, normalization, biases)"});
  const Lines llama = megatron_notes(test::llama3_70b_like());
  REQUIRE(llama.size() == 3);
  CHECK(
      llama[0].ends_with("It runs interleaved 1F1B on this layout, not the order of InterleavedZeroBubble that "
                         "ppsched timed"));
}

TEST_CASE("megatron_notes: Megatron's own schedules need no note, by any of their names") {
  RunSettings s = test::llama3_70b_like();
  s.sharding = DataSharding::Optimizer;
  s.family = "ScheduleInterleaved1F1B";
  CHECK(megatron_notes(s).size() == 1);  // only what is not set here
  s.family = "1f1b", s.stages_per_rank = 1;
  CHECK(megatron_notes(s).size() == 1);
  s.family = "auto";
  CHECK(megatron_notes(s)[0].ends_with("It runs plain 1F1B on this layout, not the order of auto that ppsched timed"));
}

}  // namespace
}  // namespace ppsched
