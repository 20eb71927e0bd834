#include "report/torchtitan_toml.hpp"

#include "support/catch.hpp"

namespace ppsched {
namespace {

TEST_CASE("torchtitan_toml: the settings torchtitan reads, with the modules of each stage") {
  TorchtitanSettings s;
  s.pp_degree = 2;
  s.schedule_class = torchtitan_class_for(2, true);
  s.csv_path = "best/schedule.csv";
  s.microbatch_size = 2;
  s.local_batch_size = 16;
  s.module_fqns = {{"tok_embeddings", "layers.0"}, {"layers.1"}, {"layers.2"}, {"layers.3", "norm", "output"}};
  s.comments = {"chosen by a test"};
  CHECK(torchtitan_toml(s) ==
        "# chosen by a test\n"
        "[parallelism]\n"
        "pipeline_parallel_degree = 2\n"
        "pipeline_parallel_schedule = \"ZBVZeroBubble\"\n"
        "pipeline_parallel_schedule_csv = \"best/schedule.csv\"\n"
        "pipeline_parallel_microbatch_size = 2\n"
        "module_fqns_per_model_part = [\n"
        "  [\"tok_embeddings\", \"layers.0\"],\n"
        "  [\"layers.1\"],\n"
        "  [\"layers.2\"],\n"
        "  [\"layers.3\", \"norm\", \"output\"],\n"
        "]\n"
        "\n[training]\n"
        "local_batch_size = 16\n");
}

TEST_CASE("torchtitan_toml: the class gives the placement, paths are TOML strings, escaped") {
  CHECK(torchtitan_class_for(1, false) == "1F1B");
  CHECK(torchtitan_class_for(4, false) == "Interleaved1F1B");
  CHECK(torchtitan_class_for(2, true) == "ZBVZeroBubble");
  TorchtitanSettings s;
  s.schedule_class = "1F1B";
  s.csv_path = "C:\\runs\\\"best\"/schedule.csv";
  const std::string toml = torchtitan_toml(s);
  CHECK(toml.find("pipeline_parallel_schedule_csv = \"C:\\\\runs\\\\\\\"best\\\"/schedule.csv\"\n") !=
        std::string::npos);
  CHECK(toml.find("module_fqns_per_model_part") == std::string::npos);  // unknown without a model: left to torchtitan
}

}  // namespace
}  // namespace ppsched

namespace ppsched {
namespace {

TEST_CASE("torchtitan_toml: module names follow the partition, blocks numbered from 0, the head as norm and output") {
  NetworkModel m;
  m.layers = {{LayerType::Embedding, {}},
              {LayerType::Block, {}},
              {LayerType::MoeBlock, {}},
              {LayerType::Block, {}},
              {LayerType::Head, {}}};
  const Partition p{{{0, 1}, {2}, {3, 4}}};
  CHECK(torchtitan_module_fqns(m, p) == std::vector<std::vector<std::string>>{{"tok_embeddings", "layers.0"},
                                                                              {"layers.1"},
                                                                              {"layers.2", "norm", "output"}});
}

TEST_CASE("torchtitan_toml: tune's pick as settings, with the comments that say what was chosen") {
  TuneRequest req;
  req.ranks = 4;
  TuneTrial best;
  best.family = "ZBVZeroBubble";
  best.stages_per_rank = 2;
  best.microbatches = 8;
  best.microbatch_size = 2;
  TuneSources src;
  src.time_model = "ideal: test";
  const TorchtitanSettings t = tune_best_settings(req, src, best, true, "best/schedule.csv");
  CHECK(t.pp_degree == 4);
  CHECK(t.schedule_class == "ZBVZeroBubble");
  CHECK(t.csv_path == "best/schedule.csv");
  CHECK(t.microbatch_size == 2);
  CHECK(t.local_batch_size == 16);
  CHECK(t.module_fqns.empty());
  CHECK(t.comments == std::vector<std::string>{
                          "ppsched tune's best: ZBVZeroBubble, 2 stage(s) per rank, 8 microbatches of 2 sample(s)",
                          "time model: ideal: test",
                          "2 stage(s) per rank, 8 stages in all: the class sets their placement, the CSV their order",
                          "no --model: the layers of each stage are torchtitan's default split"});
  // With a model the modules per stage are the caller's, and the comment says where they go.
  src.model = "llama.model.json";
  best.stages_per_rank = 1;
  const TorchtitanSettings m = tune_best_settings(req, src, best, false, "s.csv");
  CHECK(m.schedule_class == "1F1B");
  CHECK(m.comments.size() == 3);
  CHECK(m.comments.back() ==
        "1 stage(s) per rank, 4 stages in all: the class sets their placement, the CSV their order, "
        "module_fqns_per_model_part their layers");
}

}  // namespace
}  // namespace ppsched
