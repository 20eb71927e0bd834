#include "report/run_settings.hpp"

#include "support/catch.hpp"
#include "support/run_settings_samples.hpp"

using namespace ppsched;

TEST_CASE("stage_layers_problems: the samples' layouts are fit, an absent one too") {
  CHECK(stage_layers_problems(test::llama3_70b_like()).empty());
  CHECK(stage_layers_problems(test::deepseek_v3_like()).empty());
  RunSettings none = test::llama3_70b_like();
  none.stage_layers.clear();
  CHECK(stage_layers_problems(none).empty());
}

TEST_CASE("stage_layers_problems: each way a layout can be unfit, in words") {
  using Problems = std::vector<std::string>;
  RunSettings s;
  s.pp = 2, s.blocks = 4;
  s.stage_layers = {"Ett", "ttL"};
  CHECK(stage_layers_problems(s).empty());
  s.stage_layers = {"Ett", "tL", "L"};
  CHECK(stage_layers_problems(s) == Problems{"the layout has 3 stages, not pp x stages per rank = 2",
                                             "stage 1 holds a head other than as the last layer of the last stage",
                                             "the layout holds 3 blocks, the model 4"});
  s.stage_layers = {"tEt", "ttxL"};
  CHECK(stage_layers_problems(s) == Problems{"stage 0 holds an embedding other than as the first layer of stage 0",
                                             "stage 1 has a layer other than E, t and L",
                                             "the first stage does not start with E"});
  s.stage_layers = {"", "ttttLL"};
  CHECK(stage_layers_problems(s) == Problems{"stage 0 holds no layer",
                                             "stage 1 holds a head other than as the last layer of the last stage",
                                             "the first stage does not start with E"});
}

TEST_CASE("effective_sharding: one replica has nothing to shard") {
  RunSettings s;
  s.sharding = DataSharding::Optimizer;
  s.dp = 1;
  CHECK(effective_sharding(s) == DataSharding::None);
  s.dp = 4;
  CHECK(effective_sharding(s) == DataSharding::Optimizer);
}
