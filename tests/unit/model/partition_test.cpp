#include "model/partition.hpp"

#include <algorithm>
#include <functional>
#include <string>

#include "support/catch.hpp"

using namespace ppsched;

namespace {

// A model whose layers carry measured times: F + I + W of each is its entry in `totals` (embedding
// first, head last), split F = I = W.
NetworkModel measured_model(const std::vector<double>& totals) {
  NetworkModel m;
  m.name = "small";
  m.sequence_length = 16;
  m.vocab = 100;
  m.hidden = 8;
  m.ffn_hidden = 16;
  m.heads = 2;
  for (std::size_t i = 0; i < totals.size(); ++i) {
    const LayerType t = i == 0 ? LayerType::Embedding : i + 1 == totals.size() ? LayerType::Head : LayerType::Block;
    const double third = totals[i] / 3;
    m.layers.push_back({t, LayerTimes{third, third, third, 1}});
  }
  return m;
}

std::vector<std::uint32_t> blocks_per_stage(const NetworkModel& m, const Partition& p) {
  std::vector<std::uint32_t> out;
  for (const auto& stage : p.layers_of_stage)
    out.push_back(static_cast<std::uint32_t>(std::count_if(
        stage.begin(), stage.end(), [&](std::uint32_t l) { return m.layers[l].type == LayerType::Block; })));
  return out;
}

double slowest_stage(const NetworkModel& m, const Partition& p) {
  double worst = 0;
  for (const auto& stage : p.layers_of_stage) {
    double t = 0;
    for (std::uint32_t l : stage) {
      const LayerCost c = layer_cost(m, m.layers[l], nullptr, 1);
      t += c.f_us + c.i_us + c.w_us;
    }
    worst = std::max(worst, t);
  }
  return worst;
}

// Every layer once, in order, in contiguous stages.
bool covers_in_order(const NetworkModel& m, const Partition& p) {
  std::uint32_t next = 0;
  for (const auto& stage : p.layers_of_stage)
    for (std::uint32_t l : stage)
      if (l != next++) return false;
  return next == m.layers.size();
}

// The best slowest stage over every split of the blocks into `stages` non-empty runs.
// The smallest slowest stage over every split; with `empty_ends` the first and last stages may
// hold no block (the embedding or the head alone).
double brute_force(const NetworkModel& m, std::uint32_t stages, bool empty_ends) {
  const std::uint32_t n = m.block_count();
  double best = 1e300;
  std::vector<std::uint32_t> counts;
  auto fewest = [&](std::size_t stage) { return empty_ends && (stage == 0 || stage + 1 == stages) ? 0u : 1u; };
  std::function<void(std::uint32_t)> split = [&](std::uint32_t left) {
    if (counts.size() + 1 == stages) {
      if (left < fewest(counts.size())) return;
      counts.push_back(left);
      best = std::min(best, slowest_stage(m, explicit_partition(m, counts, stages)));
      counts.pop_back();
      return;
    }
    for (std::uint32_t k = fewest(counts.size()); k <= left; ++k) {
      counts.push_back(k);
      split(left - k);
      counts.pop_back();
    }
  };
  split(n);
  return best;
}

std::string layout_error(std::string_view layout, const NetworkModel& m, std::uint32_t stages) {
  try {
    parse_pipeline_layout(layout, m, stages);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("balanced: a heavy embedding and head leave the first and last stages fewer blocks") {
  const NetworkModel m = measured_model({6, 3, 3, 3, 3, 3, 3, 3, 3, 6});
  const Partition p = balanced_partition(m, 4, nullptr, 1);
  CHECK(blocks_per_stage(m, p) == std::vector<std::uint32_t>{1, 3, 3, 1});
  CHECK(p.layers_of_stage.front().front() == 0);
  CHECK(p.layers_of_stage.back().back() == 9);
  CHECK(covers_in_order(m, p));
  CHECK(slowest_stage(m, p) == Approx(9));
  // Light ones do not: an even split.
  const NetworkModel light = measured_model({0.01, 3, 3, 3, 3, 3, 3, 3, 3, 0.01});
  CHECK(blocks_per_stage(light, balanced_partition(light, 4, nullptr, 1)) == std::vector<std::uint32_t>{2, 2, 2, 2});
}

TEST_CASE("balanced: the slowest stage is as fast as brute force finds, for every stage count") {
  for (const std::vector<double>& times :
       {std::vector<double>{2, 5, 1, 4, 2, 8, 3, 6, 1, 7}, std::vector<double>{9, 5, 1, 4, 2, 8, 3, 6, 1, 12}}) {
    const NetworkModel m = measured_model(times);
    for (std::uint32_t stages = 1; stages <= m.block_count() + 2; ++stages) {
      INFO("head " << times.back() << ", stages " << stages);
      const Partition p = balanced_partition(m, stages, nullptr, 1);
      REQUIRE(p.layers_of_stage.size() == stages);
      CHECK(covers_in_order(m, p));
      const double fastest = brute_force(m, stages, true);
      CHECK(slowest_stage(m, p) == Approx(fastest).epsilon(1e-12));
      // A block on every stage whenever that is as fast.
      const std::vector<std::uint32_t> blocks = blocks_per_stage(m, p);
      const bool every_stage_a_block = std::find(blocks.begin(), blocks.end(), 0u) == blocks.end();
      if (stages <= m.block_count()) CHECK(every_stage_a_block == (brute_force(m, stages, false) == fastest));
    }
  }
}

TEST_CASE("balanced: a heavy head gets a stage of its own, and more stages than blocks are E|(t|)*nL") {
  const NetworkModel m = measured_model({1, 3, 3, 3, 3, 3, 3, 9});  // a head as costly as 3 blocks
  CHECK(blocks_per_stage(m, balanced_partition(m, 3, nullptr, 1)) == std::vector<std::uint32_t>{3, 3, 0});
  CHECK(blocks_per_stage(m, balanced_partition(m, 8, nullptr, 1)) ==
        std::vector<std::uint32_t>{0, 1, 1, 1, 1, 1, 1, 0});
  CHECK(balanced_partition(m, 8, nullptr, 1).layers_of_stage ==
        parse_pipeline_layout("E|(t|)*6L", m, 8).layers_of_stage);
}

TEST_CASE("balanced: needs a stage and no more stages than blocks + 2, unmeasured layers need a GPU") {
  const NetworkModel m = measured_model({1, 1, 1, 1});
  CHECK_NOTHROW(balanced_partition(m, 4, nullptr, 1));
  CHECK_THROWS_WITH(balanced_partition(m, 5, nullptr, 1),
                    "5 stages need at least 3 blocks, the embedding and the head a stage each; model 'small' has 2");
  CHECK_THROWS_AS(balanced_partition(m, 0, nullptr, 1), ModelError);
  NetworkModel unmeasured = m;
  unmeasured.layers[2].measured.reset();
  CHECK_THROWS_WITH(balanced_partition(unmeasured, 2, nullptr, 1), Catch::Contains("layer 2 (block) has no measured"));
  CHECK_NOTHROW(balanced_partition(unmeasured, 2, find_gpu("h100"), 1));
}

TEST_CASE("layout: Megatron's letters, stages, repetitions and groups") {
  const NetworkModel m = measured_model(std::vector<double>(9, 1));  // 7 blocks, layers 0..8
  const std::vector<std::vector<std::uint32_t>> four{{0, 1}, {2, 3}, {4, 5}, {6, 7, 8}};
  CHECK(parse_pipeline_layout("Et|tt|tt|ttL", m, 4).layers_of_stage == four);
  CHECK(parse_pipeline_layout("Et|(tt|)*2,ttL", m, 4).layers_of_stage == four);
  CHECK(parse_pipeline_layout("E,t|t*2|t,t|t*2,L", m, 4).layers_of_stage == four);
  CHECK(parse_pipeline_layout("Et*7L", m, 1).layers_of_stage ==
        std::vector<std::vector<std::uint32_t>>{{0, 1, 2, 3, 4, 5, 6, 7, 8}});
  CHECK(parse_pipeline_layout("Et*1,2L", NetworkModel(measured_model(std::vector<double>(14, 1))), 1)
            .layers_of_stage.front()
            .size() == 14);  // commas are dropped before the count is read, as Megatron does
  CHECK(parse_pipeline_layout("E(t)*0t*7L", m, 1).layers_of_stage.front().size() == 9);
  // Empty stages, as Megatron allows them; '|' repeats like a letter.
  CHECK(parse_pipeline_layout("E|t*7||L", m, 4).layers_of_stage ==
        std::vector<std::vector<std::uint32_t>>{{0}, {1, 2, 3, 4, 5, 6, 7}, {}, {8}});
  CHECK(parse_pipeline_layout("E|*2t*7L", m, 3).layers_of_stage ==
        std::vector<std::vector<std::uint32_t>>{{0}, {}, {1, 2, 3, 4, 5, 6, 7, 8}});
  // Virtual stages: PP 2 x VPP 2 is four stages in the string's order.
  CHECK(parse_pipeline_layout("Et*2|t*2|t|(t)*2,L", m, 4).layers_of_stage ==
        std::vector<std::vector<std::uint32_t>>{{0, 1, 2}, {3, 4}, {5}, {6, 7, 8}});
}

TEST_CASE("errors: layout strings, each with its column") {
  const NetworkModel m = measured_model(std::vector<double>(9, 1));  // 7 blocks
  CHECK(layout_error("Et|ttt)|tttL", m, 3) == "--pipeline-layout:7: ')' without '('");
  CHECK(layout_error("Et*7|(|L", m, 3) == "--pipeline-layout:6: '(' without ')'");
  CHECK(layout_error("Et*6|(t|)L", m, 3) == "--pipeline-layout:6: a group needs a count: (...)*N");
  CHECK(layout_error("Et*5|((t)*2)*1L", m, 2) ==
        "--pipeline-layout:7: groups do not nest (Megatron expands one level of '(...)*N')");
  CHECK(layout_error("E()*2t*7L", m, 1) == "--pipeline-layout:2: an empty group '()' repeats nothing");
  CHECK(layout_error("Et*|t*6L", m, 2) == "--pipeline-layout:3: '*' needs a count, e.g. t*4");
  CHECK(layout_error("Et*2*3t*2L", m, 1) == "--pipeline-layout:5: '*' must follow a layer letter, '|' or a group");
  CHECK(layout_error("Et*7 L", m, 1) ==
        "--pipeline-layout:5: unknown symbol ' ': E embedding, t block, L head and loss, '|' stage boundary");
  CHECK(layout_error("Et*7|m|L", m, 3) == "--pipeline-layout:6: 'm' (a multi-token prediction layer) is not modelled");
  CHECK(layout_error("tEt*6L", m, 1) == "--pipeline-layout:1: the layout must start with 'E' (the embedding)");
  CHECK(layout_error("EEt*6L", m, 1) == "--pipeline-layout:2: 'E' (the embedding) comes once, first");
  CHECK(layout_error("Et*4|t*4L", m, 2) == "--pipeline-layout:6: 't' would be block 8, the model has 7 blocks");
  CHECK(layout_error("Et*6|L", m, 2) == "--pipeline-layout:6: 'L' (the head) after 6 of the model's 7 blocks");
  CHECK(layout_error("Et*7LL", m, 1) ==
        "--pipeline-layout:6: 'L' after 'L': the head and loss is the model's last layer");
  CHECK(layout_error("Et*7L", m, 2) == "--pipeline-layout: the layout has 1 stage, the pipeline has 2");
  CHECK(layout_error("Et|t*6|L", m, 2) == "--pipeline-layout: the layout has 3 stages, the pipeline has 2");
  CHECK(layout_error("Et*7", m, 1) == "--pipeline-layout: the layout ends without 'L' (the head and loss)");
  CHECK(layout_error("", m, 1) == "--pipeline-layout: the layout places no 'E' (the embedding)");
  // A count far beyond the model fails at the first block too many, without expanding it all.
  CHECK(layout_error("Et*99999999999999999999L", m, 1) ==
        "--pipeline-layout:2: 't' would be block 8, the model has 7 blocks");
  CHECK(layout_error("E(|)*9999999999999t*7L", m, 1) ==
        "--pipeline-layout: the layout has too many stages, the pipeline has 1");
}

TEST_CASE("explicit: blocks per stage, the embedding joins stage 0 and the head the last stage") {
  const NetworkModel m = measured_model(std::vector<double>(9, 1));  // 7 blocks
  CHECK(explicit_partition(m, {3, 2, 2}, 3).layers_of_stage ==
        std::vector<std::vector<std::uint32_t>>{{0, 1, 2, 3}, {4, 5}, {6, 7, 8}});
  CHECK(explicit_partition(m, {0, 7, 0}, 3).layers_of_stage ==
        std::vector<std::vector<std::uint32_t>>{{0}, {1, 2, 3, 4, 5, 6, 7}, {8}});
  CHECK_THROWS_WITH(explicit_partition(m, {3, 4}, 3), "blocks per stage: 2 counts given, the pipeline has 3 stages");
  CHECK_THROWS_WITH(explicit_partition(m, {3, 3, 3}, 3),
                    "blocks per stage: the counts add up to 9 blocks, model 'small' has 7");
}
