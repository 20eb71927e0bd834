// The automatic schedule is ranked as tune ranks its table (AutoParams::ranked_by): in every tune
// table it is never slower than a family of its shape (its stages per rank and placement), under
// every runtime, optimizer and memory model. Checked over 216 requests drawn from a grid of rank
// and microbatch counts, cost mixes (T_F above and below T_I, stage costs that vary), links,
// caps, runtimes, optimizers, memory models and PyTorch's lowering keywords.
#include <fmt/format.h>

#include <random>

#include "auto/auto_schedule.hpp"
#include "sim/activation_liveness.hpp"
#include "support/catch.hpp"
#include "synth/synth.hpp"
#include "tune/tune.hpp"

namespace ppsched {
namespace {

struct Mix {
  double f, i, w;
  bool uneven;  // the last stage costs twice the others (a loss head)
};

SimInputs inputs_of(const std::vector<std::uint32_t>& stage_to_rank, std::uint32_t ranks, const Mix& mix,
                    double latency) {
  const auto stages = static_cast<std::uint32_t>(stage_to_rank.size());
  KindCosts k = unit_costs();
  k[static_cast<std::size_t>(ActionKind::F)] = mix.f;
  k[static_cast<std::size_t>(ActionKind::I)] = mix.i;
  k[static_cast<std::size_t>(ActionKind::W)] = mix.w;
  k[static_cast<std::size_t>(ActionKind::B)] = mix.i + mix.w;
  SimInputs in;
  in.sim.costs = CostModel::uniform(stages, stages / ranks, k);
  if (mix.uneven)
    for (double& c : in.sim.costs.per_stage.back()) c *= 2;
  if (latency > 0) {
    Topology topo;
    for (std::uint32_t r = 0; r < ranks; ++r) topo.node_of_rank.push_back(r);  // a node per rank
    topo.inter_node = {latency, 0};
    in.sim.comm.topology = topo;
  }
  return in;
}

}  // namespace

TEST_CASE("tune: auto is never slower than a family of its shape, under any runtime and memory model") {
  const std::uint32_t rank_counts[] = {2, 3, 4, 6, 8};
  const Mix mixes[] = {{1, 1, 1, false}, {2, 1, 1, false}, {1, 1.5, 0.5, false}, {3, 1, 0.5, true}, {1, 2, 2, true}};
  const Runtime runtimes[] = {Runtime::PyTorch, Runtime::Ideal, Runtime::Megatron};
  std::mt19937 rng(20261202);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  std::size_t requests = 0, compared = 0, family_won_search = 0;
  for (int n = 0; n < 216; ++n) {
    TuneRequest req;
    req.ranks = rank_counts[pick(std::size(rank_counts))];
    const std::uint32_t mb_choices[] = {req.ranks, req.ranks + 2, 2 * req.ranks, 3 * req.ranks / 2 + 1};
    req.microbatches = mb_choices[pick(std::size(mb_choices))];
    req.stages_per_rank = {1, 2};
    req.runtime = runtimes[n % 3];
    req.optimizer = pick(4) == 0 ? Optimizer::PostValidated : Optimizer::Sync;
    if (pick(3) == 0) req.liveness = LivenessGranularity::StageMicrobatch;
    const double caps[] = {0, double(req.ranks), double(req.ranks / 2 + 1)};
    req.memory_cap = caps[pick(std::size(caps))];
    if (req.runtime == Runtime::PyTorch && pick(4) == 0) {
      req.keywords.values.defer_pp_recv = true;
      req.keywords.defer_pp_recv_given = true;
    }
    if (req.runtime != Runtime::Megatron && pick(5) == 0) req.blocking_comms = true;
    req.time_budget_s = pick(2) == 0 ? 0.05 : 0;  // a small budget and the default
    const Mix mix = mixes[pick(std::size(mixes))];
    const double latency = pick(2) == 0 ? 0.0 : 0.3;
    INFO(fmt::format(
        "request {}: {} ranks, {} microbatches, runtime {}, optimizer {}, cap {}, {}, mix F={} I={} "
        "W={}{}, latency {}{}{}",
        n, req.ranks, req.microbatches, runtime_name(req.runtime), optimizer_name(req.optimizer), req.memory_cap,
        req.liveness ? "slots" : "bytes", mix.f, mix.i, mix.w, mix.uneven ? " uneven" : "", latency,
        req.keywords.values.defer_pp_recv ? ", defer_pp_recv" : "", req.blocking_comms ? ", blocking" : ""));
    const auto result = tune_schedules(req, tune_trials(req), [&](const auto& placement, std::uint32_t) {
      return std::optional<SimInputs>(inputs_of(placement, req.ranks, mix, latency));
    });
    REQUIRE(result);
    ++requests;
    for (const TuneTrial& a : result->trials) {
      if (!is_auto_schedule(a.family)) continue;
      for (const TuneTrial& f : result->trials) {
        if (is_auto_schedule(f.family) || f.stages_per_rank != a.stages_per_rank || f.microbatches != a.microbatches)
          continue;
        if (find_family(f.family)->placement != auto_placement(a.stages_per_rank) || !f.fits) continue;
        INFO(fmt::format("auto v={} ({}) against {}: {} vs {}", a.stages_per_rank, a.note, f.family, a.iteration_time,
                         f.iteration_time));
        ++compared;
        REQUIRE(a.fits);
        CHECK(a.iteration_time <= f.iteration_time);
      }
      family_won_search += a.note.find(" under --runtime ") != std::string::npos;
    }
  }
  CHECK(requests == 216);
  CHECK(compared > 800);  // 927 pairs where the family fits
  // The ranking is what makes the difference: on some requests a family beats the search's own
  // answer under the runtime (what tune showed as auto losing before it was ranked).
  CHECK(family_won_search > 0);
}

}  // namespace ppsched
