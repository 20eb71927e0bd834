#include "report/torchtitan_settings.hpp"

#include "ir/user_error.hpp"
#include "support/catch.hpp"
#include "support/run_settings_samples.hpp"

namespace ppsched {
namespace {

using Args = std::vector<std::string>;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST_CASE("torchtitan_overrides: a Llama-3-70B-like run, FSDP over 2 replicas, looped stages from a CSV") {
  const RunSettings s = test::llama3_70b_like();
  CHECK(torchtitan_refusals(s).empty());
  CHECK(torchtitan_overrides(s) == Args{"--parallelism.pipeline_parallel_degree",
                                        "8",
                                        "--parallelism.pipeline_parallel_schedule",
                                        "PipelineScheduleMulti",
                                        "--parallelism.pipeline_parallel_schedule_csv",
                                        "/runs/best/schedule.csv",
                                        "--parallelism.num_pp_microbatches",
                                        "16",
                                        "--parallelism.tensor_parallel_degree",
                                        "8",
                                        "--parallelism.enable_sequence_parallel",
                                        "--parallelism.data_parallel_shard_degree",
                                        "2",
                                        "--parallelism.data_parallel_replicate_degree",
                                        "1",
                                        "--parallelism.fsdp_reshard_after_forward",
                                        "always",
                                        "--training.num_tokens_per_microbatch_per_dp_rank",
                                        "8192",
                                        "--training.num_tokens_per_train_step",
                                        "262144",
                                        "--training.max_context_length",
                                        "8192",
                                        "--training.disable_cuda_graphs",
                                        "activation-checkpoint:full"});
}

TEST_CASE("torchtitan_overrides: a DeepSeek-V3-like MoE in a V, expert parallel, gathered parameters kept") {
  const RunSettings s = test::deepseek_v3_like();
  CHECK(torchtitan_refusals(s).empty());
  CHECK(torchtitan_overrides(s) == Args{"--parallelism.pipeline_parallel_degree",
                                        "8",
                                        "--parallelism.pipeline_parallel_schedule",
                                        "ZBVZeroBubble",
                                        "--parallelism.pipeline_parallel_schedule_csv",
                                        "/runs/best/schedule.csv",
                                        "--parallelism.num_pp_microbatches",
                                        "32",
                                        "--parallelism.tensor_parallel_degree",
                                        "1",
                                        "--parallelism.data_parallel_shard_degree",
                                        "32",
                                        "--parallelism.data_parallel_replicate_degree",
                                        "1",
                                        "--parallelism.fsdp_reshard_after_forward",
                                        "never",
                                        "--parallelism.expert_parallel_degree",
                                        "32",
                                        "--training.num_tokens_per_microbatch_per_dp_rank",
                                        "4096",
                                        "--training.num_tokens_per_train_step",
                                        "4194304",
                                        "--training.max_context_length",
                                        "4096",
                                        "--training.disable_cuda_graphs",
                                        "activation-checkpoint:selective"});
}

TEST_CASE("torchtitan_overrides: replicas without sharding, SP off, one stage per rank, no recompute") {
  RunSettings s = test::llama3_70b_like();
  s.sharding = DataSharding::None, s.sequence_parallel = false, s.stages_per_rank = 1;
  s.stage_layers = test::stage_layers(9, 6, 10, 11);
  s.recompute = RecomputeSetting::None;
  const Args a = torchtitan_overrides(s);
  CHECK(a[3] == "PipelineScheduleSingle");
  CHECK(Args(a.begin() + 10, a.begin() + 15) == Args{"--parallelism.no_enable_sequence_parallel",
                                                     "--parallelism.data_parallel_shard_degree", "1",
                                                     "--parallelism.data_parallel_replicate_degree", "2"});
  CHECK(a.back() == "activation-checkpoint:none");
  // Without a pipeline there is no schedule, and CUDA graphs may stay.
  s.pp = 1, s.gpus = 16, s.stage_layers = {"E" + std::string(80, 't') + "L"}, s.microbatches = 16;
  const Args one = torchtitan_overrides(s);
  CHECK(one[0] == "--parallelism.pipeline_parallel_degree");
  CHECK(one[1] == "1");
  CHECK(one[2] == "--parallelism.tensor_parallel_degree");
  CHECK(std::find(one.begin(), one.end(), "--training.disable_cuda_graphs") == one.end());
  const std::string py = torchtitan_config_registry(s, "m", "f");
  CHECK(py.find("module_fqns_per_model_part") == std::string::npos);
  s.stages_per_rank = 2, s.stage_layers = {"E" + std::string(40, 't'), std::string(40, 't') + "L"};
  CHECK(torchtitan_refusals(s) == Args{"torchtitan turns pipelining off at degree 1, so 2 stages on one rank are one"});
}

TEST_CASE("torchtitan_stage_modules: E, t and L as torchtitan's module names, blocks counted from 0") {
  const auto m = torchtitan_stage_modules(test::llama3_70b_like());
  REQUIRE(m.size() == 16);
  CHECK(m[0] == Args{"tok_embeddings", "layers.0", "layers.1", "layers.2", "layers.3"});
  CHECK(m[1] == Args{"layers.4", "layers.5", "layers.6", "layers.7", "layers.8"});
  CHECK(m[15] == Args{"layers.74", "layers.75", "layers.76", "layers.77", "layers.78", "layers.79", "norm", "lm_head"});
}

TEST_CASE("torchtitan_config_registry: a small run, the whole module") {
  RunSettings s;
  s.model_name = "tiny";
  s.blocks = 4, s.sequence_length = 1024;
  s.gpus = 4, s.pp = 2, s.stages_per_rank = 2, s.tp = 1, s.dp = 2, s.sharding = DataSharding::Full;
  s.schedule_csv = "s.csv";
  s.microbatches = 4, s.microbatch_size = 2, s.global_batch = 16;
  s.recompute = RecomputeSetting::Full;
  s.stage_layers = {"Et", "t", "t", "tL"};
  s.comments = {"chosen by a test"};
  CHECK(torchtitan_config_registry(s, "torchtitan.models.llama3.config_registry", "llama3_debugmodel") ==
        "# Written by ppsched tune --emit-best: a torchtitan config_registry module (torchtitan b5bcd76c).\n"
        "# Run it with --module <this module> --config ppsched_best, its folder on PYTHONPATH.\n"
        "# chosen by a test\n"
        "# model: tiny\n"
        "\n"
        "from torchtitan.distributed.activation_checkpoint import FullAC\n"
        "from torchtitan.trainer import Trainer\n"
        "\n"
        "from torchtitan.models.llama3.config_registry import llama3_debugmodel as _base_config\n"
        "\n"
        "\n"
        "def ppsched_best() -> Trainer.Config:\n"
        "    config = _base_config()\n"
        "    config.parallelism.pipeline_parallel_degree = 2\n"
        "    config.parallelism.pipeline_parallel_schedule = \"PipelineScheduleMulti\"\n"
        "    config.parallelism.pipeline_parallel_schedule_csv = \"s.csv\"\n"
        "    config.parallelism.num_pp_microbatches = 4\n"
        "    config.parallelism.tensor_parallel_degree = 1\n"
        "    config.parallelism.data_parallel_shard_degree = 2\n"
        "    config.parallelism.data_parallel_replicate_degree = 1\n"
        "    config.parallelism.fsdp_reshard_after_forward = \"always\"\n"
        "    config.training.num_tokens_per_microbatch_per_dp_rank = 2048\n"
        "    config.training.num_tokens_per_train_step = 16384\n"
        "    config.training.max_context_length = 1024\n"
        "    config.training.disable_cuda_graphs = True\n"
        "    # The modules of each stage, in stage order: set here and not on the command line, whose\n"
        "    # spelling of a nested list is not verified; no layers per stage, which torchtitan would\n"
        "    # check against the schedule class.\n"
        "    config.parallelism.pipeline_parallel_layers_per_stage = None\n"
        "    config.parallelism.module_fqns_per_model_part = [\n"
        "        [\"tok_embeddings\", \"layers.0\"],\n"
        "        [\"layers.1\"],\n"
        "        [\"layers.2\"],\n"
        "        [\"layers.3\", \"norm\", \"lm_head\"],\n"
        "    ]\n"
        "    config.activation_checkpoint = FullAC.Config()\n"
        "    return config\n");
}

TEST_CASE("torchtitan_config_registry: the policy's class or None, and names that are not Python refused") {
  RunSettings s = test::deepseek_v3_like();
  const std::string sel =
      torchtitan_config_registry(s, "torchtitan.models.deepseek_v3.config_registry", "deepseek_v3_671b");
  CHECK(contains(sel, "from torchtitan.distributed.activation_checkpoint import SelectiveAC\n"));
  CHECK(contains(sel, "    config.activation_checkpoint = SelectiveAC.Config()\n"));
  CHECK(contains(sel, "    config.parallelism.expert_parallel_degree = 32\n"));
  s.recompute = RecomputeSetting::None;
  const std::string none = torchtitan_config_registry(s, "m", "f");
  CHECK_FALSE(contains(none, "activation_checkpoint import"));
  CHECK(contains(none, "    config.activation_checkpoint = None\n"));
  CHECK_THROWS_WITH(torchtitan_config_registry(s, "os; import sys", "f"),
                    "the base config module 'os; import sys' is not a Python module name (identifiers joined by dots)");
  CHECK_THROWS_WITH(torchtitan_config_registry(s, "m", "def"),
                    "the base config function 'def' is not a Python identifier");
}

// A path and a model name with everything that could break out of a string, a comment, a word or
// an encoding: quotes, a backslash, newlines, a command substitution, non-ASCII and a stray byte.
TEST_CASE("torchtitan faces: hostile paths and names stay values in every face") {
  RunSettings s = test::llama3_70b_like();
  s.schedule_csv = "/r/\"q\" 'a'\\b\n$(touch x)/é\xff.csv";
  s.model_name = "m\nimport os  # \xe2\x80\xae";
  s.comments = {"coding: latin-1", "x\r\ny"};
  const Args a = torchtitan_overrides(s);
  CHECK(a[5] == s.schedule_csv);  // one argument, byte for byte
  const std::string py = torchtitan_config_registry(s, "torchtitan.models.llama3.config_registry", "llama3_70b");
  CHECK(contains(py,
                 "    config.parallelism.pipeline_parallel_schedule_csv = "
                 "\"/r/\\\"q\\\" 'a'\\\\b\\n$(touch x)/é\\udcff.csv\"\n"));
  CHECK(contains(py, "# coding: latin-1\n# x\\x0D\\x0Ay\n# model: m\\x0Aimport os  # \\u202E\n"));
  CHECK(py.rfind("# Written by ppsched", 0) == 0);  // no user text on the lines Python reads an encoding from
  const std::string sh = torchtitan_script(s, "/opt/my configs", "ppsched_torchtitan_config");
  CHECK(contains(sh, "# model: m\\x0Aimport os  # \\u202E\n"));
  CHECK(contains(sh, " --parallelism.pipeline_parallel_schedule_csv '/r/\"q\" '\\''a'\\''\\b\n$(touch x)/é\xff.csv' "));
  // A path that starts with '-' would read as an option: the same file, from "./".
  s.schedule_csv = "-rf.csv";
  CHECK(torchtitan_overrides(s)[5] == "./-rf.csv");
}

TEST_CASE("torchtitan_script: run_train.sh with the registry on PYTHONPATH and the overrides") {
  const RunSettings s = test::deepseek_v3_like();
  const std::string sh = torchtitan_script(s, "/runs/best", "ppsched_torchtitan_config");
  CHECK(sh.rfind("#!/bin/sh\n# Written by ppsched tune --emit-best: a torchtitan run (torchtitan b5bcd76c)", 0) == 0);
  CHECK(contains(sh,
                 "\n# ppsched tune's best: DualPipeV\n# model: deepseek-v3-like\n"
                 "PYTHONPATH=/runs/best${PYTHONPATH:+:$PYTHONPATH} NGPU=256 MODULE=ppsched_torchtitan_config "
                 "CONFIG=ppsched_best ./run_train.sh --parallelism.pipeline_parallel_degree 8 "));
  CHECK(sh.ends_with(" --training.disable_cuda_graphs activation-checkpoint:selective\n"));
  CHECK(contains(torchtitan_script(s, "", "m"), "\nNGPU=256 MODULE=m CONFIG=ppsched_best ./run_train.sh "));
  CHECK_THROWS_AS(torchtitan_script(s, "", "m-n"), UserError);
}

TEST_CASE("torchtitan_refusals: what torchtitan cannot run, and the faces refuse it too") {
  using Why = std::vector<std::string>;
  RunSettings s = test::llama3_70b_like();
  s.sharding = DataSharding::Optimizer;
  CHECK(torchtitan_refusals(s) ==
        Why{"torchtitan shards data-parallel state with FSDP2 (ZeRO-3: parameters, gradients and optimizer state) or "
            "not at all; ZeRO-1 sharding has no setting there: tune with full sharding or none"});
  CHECK_THROWS_AS(torchtitan_overrides(s), UserError);
  CHECK_THROWS_AS(torchtitan_config_registry(s, "m", "f"), UserError);
  s.sharding = DataSharding::Gradients;
  CHECK_THROWS_WITH(torchtitan_overrides(s),
                    "torchtitan (b5bcd76c) cannot run these settings: torchtitan shards data-parallel state with FSDP2 "
                    "(ZeRO-3: parameters, gradients and optimizer state) or not at all; ZeRO-2 sharding has no "
                    "setting there: tune with full sharding or none");
  s.dp = 1, s.gpus = 64, s.global_batch = 16;  // one replica: nothing to shard, nothing refused
  CHECK(torchtitan_refusals(s).empty());

  s = test::deepseek_v3_like();
  s.schedule_csv.clear();
  s.stages_per_rank = 3;
  s.ep = 64;
  s.global_batch = 1000;
  s.stage_layers.clear();
  CHECK(torchtitan_refusals(s) ==
        Why{"the chosen order reaches torchtitan only as a schedule CSV, and there is none",
            "torchtitan places a V with 2 stages per rank, not 3",
            "without the layers of each stage torchtitan splits the model into 1 or 2 stages per rank, not 3: tune "
            "with a model file",
            "torchtitan's expert parallel takes its ranks from FSDP x TP = 32, which ep 64 does not divide",
            "the global batch 1000 is not a multiple of microbatch size x microbatches x dp = 1024"});

  s = test::llama3_70b_like();
  s.gpus = 100;
  s.sequence_length = 8191;
  s.stage_layers.pop_back();
  CHECK(torchtitan_refusals(s) == Why{"pp x tp x dp = 8 x 8 x 2 is not the run's 100 GPUs",
                                      "the layout has 15 stages, not pp x stages per rank = 16",
                                      "the last stage does not end with L", "the layout holds 74 blocks, the model 80",
                                      "8191 tokens per microbatch do not split over sequence parallel 8"});
}

}  // namespace
}  // namespace ppsched
