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

}  // namespace
}  // namespace ppsched
