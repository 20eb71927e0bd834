// sequential_peak against compute_memory on the simulated timeline: equal when every action lasts
// a positive time, never below it when some last zero (an upper bound the automatic search relies
// on to rule out a family over its cap without simulating it).
#include "sim/memory.hpp"

#include <random>

#include "sim/timed.hpp"
#include "support/catch.hpp"
#include "support/family_schedules.hpp"
#include "synth/synth.hpp"

using namespace ppsched;

namespace {

double simulated_peak(const Schedule& s, const TimedOptions& opt, const MemoryModel& memory) {
  return compute_memory(s, simulate_timed(s, s.placement.stage_to_rank, opt), memory).max_peak();
}

MemoryModel random_memory(const Schedule& s, std::mt19937& rng) {
  std::uniform_real_distribution<double> size(0.1, 2.0), share(0.0, 1.0);
  MemoryModel m;
  for (std::uint32_t st = 0; st < s.num_stages; ++st) {
    m.activation.push_back(size(rng));
    m.weight_grad.push_back(m.activation.back() * share(rng));
  }
  m.fixed_per_rank.assign(s.rank_count(), size(rng));
  return m;
}

}  // namespace

TEST_CASE("sequential_peak is the simulated peak when every action takes time") {
  std::mt19937 rng(11);
  std::size_t compared = 0;
  test::for_each_family_schedule(4, {4u, 8u, 12u}, [&](const Family& family, std::uint32_t m, const Schedule& s) {
    INFO(family.name << " m=" << m);
    std::uniform_real_distribution<double> cost(0.25, 3.0);
    TimedOptions opt;
    opt.costs.per_stage.assign(s.num_stages, unit_costs());
    for (auto& k : opt.costs.per_stage)
      for (ActionKind kind : {ActionKind::F, ActionKind::I, ActionKind::W, ActionKind::B})
        k[static_cast<std::size_t>(kind)] = cost(rng);
    const MemoryModel memory = random_memory(s, rng);
    CHECK(sequential_peak(s, memory) == simulated_peak(s, opt, memory));
    CHECK(sequential_peak(s, MemoryModel{}) == simulated_peak(s, opt, MemoryModel{}));
    ++compared;
  });
  CHECK(compared > 20);
}

TEST_CASE("sequential_peak is an upper bound when some actions take no time") {
  // One stage, F and W free of cost: F1 and W0 run at the instant I0 ends. compute_memory frees
  // I0's and W0's share before F1 allocates (peak 1); in program order F1 allocates first (1.25).
  Schedule s;
  s.ranks.resize(1);
  s.num_stages = 1;
  s.num_microbatches = 2;
  s.placement = Placement::loop(1, 1);
  for (auto [kind, mb] : {std::pair{ActionKind::F, 0},
                          {ActionKind::I, 0},
                          {ActionKind::F, 1},
                          {ActionKind::W, 0},
                          {ActionKind::I, 1},
                          {ActionKind::W, 1}})
    s.ranks[0].actions.push_back(Action::make(kind, 0, static_cast<std::uint32_t>(mb)));
  KindCosts k = unit_costs();
  k[static_cast<std::size_t>(ActionKind::F)] = 0;
  k[static_cast<std::size_t>(ActionKind::W)] = 0;
  TimedOptions opt;
  opt.costs = CostModel::uniform(1, 1, k);
  MemoryModel memory;
  memory.weight_grad.assign(1, 0.25);
  CHECK(simulated_peak(s, opt, memory) == 1.0);
  CHECK(sequential_peak(s, memory) == 1.25);
}

TEST_CASE("a checkpointed stage holds what checkpointing keeps until I, then also what W reads until W") {
  std::vector<StageSpec> spec(3);
  for (StageSpec& st : spec) {
    st.activation_bytes = 10;
    st.activation_memory_bytes = 100;  // M_B without checkpointing
    st.weight_grad_memory_bytes = 40;  // M_W
    st.recompute.mode = Recompute::Mode::Full;
  }
  spec[2].recompute.kept_memory_bytes = 70;  // kept + M_W would exceed M_B: never more than M_B
  const MemoryModel m = MemoryModel::from_stage_spec(spec, {0, 1, 2}, 3);
  CHECK(m.activation == std::vector<double>{10, 10, 70});
  // Stage 0 recomputes nothing at I (PyTorch skips it there); the others hold inputs + M_W.
  CHECK(m.weight_grad == std::vector<double>{10, 50, 100});
  spec[1].recompute.held_for_weight_bytes = 33;  // stated (a model's partly checkpointed stage)
  CHECK(MemoryModel::from_stage_spec(spec, {0, 1, 2}, 3).weight_grad[1] == 33);
}
