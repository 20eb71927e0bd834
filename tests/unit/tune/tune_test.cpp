#include "tune/tune.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "ir/user_error.hpp"
#include "sim/aggregate.hpp"
#include "sim/runtime.hpp"
#include "support/catch.hpp"

namespace ppsched {
namespace {

// Unit costs split over the stages of a rank, and (when `weights` is set) a stage spec's byte
// model in which stage s weighs (s + 1) GB, so that where a stage is placed changes its rank's peak.
struct Inputs {
  bool weights = false;
  std::vector<std::vector<std::uint32_t>> asked;  // the placements the engine asked for, in order

  std::optional<SimInputs> operator()(std::uint32_t ranks, const std::vector<std::uint32_t>& stage_to_rank) {
    asked.push_back(stage_to_rank);
    const auto stages = static_cast<std::uint32_t>(stage_to_rank.size());
    SimInputs in;
    in.sim.costs = CostModel::uniform(stages, stages / ranks, unit_costs());
    if (weights) {
      std::vector<StageSpec> spec(stages);
      for (std::uint32_t s = 0; s < stages; ++s) {
        spec[s].activation_memory_bytes = 1e8;
        spec[s].weight_grad_memory_bytes = 5e7;
        spec[s].weight_bytes = (s + 1) * 1e9;
      }
      in.memory = MemoryModel::from_stage_spec(spec, stage_to_rank, ranks);
    }
    return in;
  }
};

std::string plain(double v) { return fmt::format("{:g}", v); }

TuneRequest request(std::uint32_t ranks, std::uint32_t microbatches, std::vector<std::string> families) {
  TuneRequest r;
  r.ranks = ranks;
  r.microbatches = microbatches;
  r.families = std::move(families);
  return r;
}

const TuneTrial& find(const TuneResult& r, const std::string& family, std::uint32_t v) {
  auto it = std::find_if(r.trials.begin(), r.trials.end(),
                         [&](const TuneTrial& t) { return t.family == family && t.stages_per_rank == v; });
  REQUIRE(it != r.trials.end());
  return *it;
}

TEST_CASE("tune: auto's two-chunk trial is simulated with V placement, the placement of the schedule it emits") {
  // Regression: tune built the inputs of auto at two stages per rank with loop placement, so the
  // weights it charged each rank were not those of the schedule it emitted.
  Inputs inputs{.weights = true, .asked = {}};
  const TuneRequest req = request(4, 8, {"auto"});
  auto result = tune_schedules(req, tune_trials(req),
                               [&](const auto& placement, std::uint32_t) { return inputs(req.ranks, placement); });
  REQUIRE(result);
  const TuneTrial& v2 = find(*result, "auto", 2);
  REQUIRE(v2.ran);
  CHECK(v2.schedule.placement.style == PlacementStyle::V);
  CHECK(std::find(inputs.asked.begin(), inputs.asked.end(), v2.schedule.placement.stage_to_rank) != inputs.asked.end());
  CHECK(std::find(inputs.asked.begin(), inputs.asked.end(), Placement::loop(4, 8).stage_to_rank) == inputs.asked.end());
  // The peak tune reports is the one `simulate` finds for the emitted schedule: V puts 9 GB of
  // weights on every rank (loop would put 12 GB on rank 3).
  SimInputs own = Inputs{.weights = true, .asked = {}}(4, v2.schedule.placement.stage_to_rank).value();
  SimAnalysis a = simulate_aggregates(v2.schedule, v2.schedule.placement.stage_to_rank, own.sim, own.memory);
  CHECK(v2.peak == a.memory.max_peak());
  CHECK(v2.peak > 9e9);
  CHECK(v2.peak < 10e9);
}

TEST_CASE("tune: one request for each distinct placement, trials in order, ranked by time with the unfit last") {
  Inputs inputs;
  TuneRequest req = request(4, 8, {"1F1B", "ZBH1", "ZBH2", "Interleaved1F1B"});
  req.memory_cap = 4;
  auto result = tune_schedules(req, tune_trials(req),
                               [&](const auto& placement, std::uint32_t) { return inputs(req.ranks, placement); });
  REQUIRE(result);
  // 1F1B, ZBH1, ZBH2 share loop placement with one stage per rank; Interleaved1F1B tries 2 and 4.
  CHECK(inputs.asked.size() == 3);
  CHECK(std::set(inputs.asked.begin(), inputs.asked.end()).size() == 3);
  REQUIRE(result->trials.size() == 5);
  REQUIRE(result->found());
  const TuneTrial& best = result->trials.front();
  bool over = false;
  double last = 0;
  for (const TuneTrial& t : result->trials) {
    INFO(t.family << " v=" << t.stages_per_rank);
    REQUIRE(t.ran);
    CHECK(t.fits == (t.peak <= 4 + 1e-9));
    if (t.fits) {
      CHECK_FALSE(over);  // every fitting trial comes before the first one over the cap
      CHECK(t.iteration_time >= last);
      last = t.iteration_time;
    }
    over |= !t.fits;
  }
  // ZB-H2 holds 2p - 1 = 7 microbatches: over a cap of 4, with the verdict saying so.
  const TuneTrial& zbh2 = find(*result, "ZBH2", 1);
  CHECK_FALSE(zbh2.fits);
  CHECK(tune_verdict(zbh2, best, 4, plain) == "over the cap: peak 7 > 4");
  CHECK(tune_verdict(best, best, 4, plain) == "best");
}

TEST_CASE("tune: a global batch tries every divisor, with per-sample costs and sizes scaled by G/m") {
  Inputs inputs;
  TuneRequest req;
  req.ranks = 2;
  req.global_batch = 6;
  req.families = {"1F1B"};
  CHECK(tune_microbatch_counts(req) == std::vector<std::uint32_t>{1, 2, 3, 6});
  std::vector<std::uint32_t> sizes;
  auto result = tune_schedules(req, tune_trials(req), [&](const auto& placement, std::uint32_t samples) {
    sizes.push_back(samples);
    return per_sample_inputs(*inputs(req.ranks, placement), samples, req.ranks, 2);
  });
  REQUIRE(result);
  CHECK(sizes == std::vector<std::uint32_t>{6, 3, 2, 1});  // one request per microbatch size, G/m samples each
  REQUIRE(result->trials.size() == 4);
  for (const TuneTrial& t : result->trials) {
    INFO("m=" << t.microbatches);
    if (t.microbatches < req.ranks) {  // 1F1B needs at least as many microbatches as ranks
      CHECK_FALSE(t.ran);
      continue;
    }
    const double samples = 6.0 / t.microbatches;
    // 1F1B at unit costs: (m + p - 1) x (F + B) = (m + 1) x 3, each cost times G/m.
    CHECK(t.iteration_time == Approx((t.microbatches + 1) * 3 * samples));
    CHECK(t.peak == Approx(std::min<double>(t.microbatches, 2) * samples));
  }
  CHECK(result->trials.front().microbatches == 6);  // the most microbatches has the least bubble
}

TEST_CASE("tune: bad requests are refused with the flag's message") {
  TuneRequest both = request(4, 8, {});
  both.global_batch = 8;
  CHECK_THROWS_WITH(tune_trials(both), "give either --microbatches M or --global-batch G");
  CHECK_THROWS_WITH(tune_trials(request(4, 8, {"ZBX"})), "--families: unknown schedule 'ZBX' (see ppsched list)");
  CHECK_THROWS_AS(tune_trials(both), UserError);
  // A family that cannot run the shape is a trial that did not run, with the family's reason.
  const TuneRequest dual = request(4, 2, {"DualPipeV"});
  auto result = tune_schedules(dual, tune_trials(dual),
                               [](const auto&, std::uint32_t) { return std::optional<SimInputs>(SimInputs{}); });
  REQUIRE(result);
  REQUIRE(result->trials.size() == 1);
  CHECK_FALSE(result->trials[0].ran);
  CHECK_FALSE(result->found());
  CHECK(tune_verdict(result->trials[0], result->trials[0], 0, plain).rfind("cannot run: ", 0) == 0);
  // Inputs that cannot be had stop the tuning.
  const TuneRequest one = request(4, 8, {"1F1B"});
  CHECK_FALSE(
      tune_schedules(one, tune_trials(one), [](const auto&, std::uint32_t) { return std::optional<SimInputs>(); }));
}

TEST_CASE("tune: the shapes tried are those the stage limits allow, and each family runs at the ones it supports") {
  TuneRequest req = request(4, 8, {"1F1B", "ZBVZeroBubble", "Interleaved1F1B", "auto"});
  CHECK(tune_shapes(req) == std::vector<std::uint32_t>{1, 2, 4});
  auto shapes_of = [&](const std::string& family) {
    std::vector<std::uint32_t> out;
    for (const TuneTrial& t : tune_trials(req))
      if (t.family == family) out.push_back(t.stages_per_rank);
    return out;
  };
  CHECK(shapes_of("1F1B") == std::vector<std::uint32_t>{1});
  CHECK(shapes_of("ZBVZeroBubble") == std::vector<std::uint32_t>{2});
  CHECK(shapes_of("Interleaved1F1B") == std::vector<std::uint32_t>{2, 4});
  CHECK(shapes_of("auto") == std::vector<std::uint32_t>{1, 2});
  req.max_stages = 10;  // a model of 10 blocks: 16 stages cannot be
  CHECK(tune_shapes(req) == std::vector<std::uint32_t>{1, 2});
  CHECK(shapes_of("Interleaved1F1B") == std::vector<std::uint32_t>{2});
  req.max_stages = 0;
  req.only_stages = 4;  // a cost table of 4 stages
  CHECK(tune_shapes(req) == std::vector<std::uint32_t>{1});
  CHECK(shapes_of("ZBVZeroBubble").empty());
  req.only_stages = 12;
  CHECK_THROWS_WITH(tune_trials(req), Catch::Contains("never give the 12 stages"));
}

TEST_CASE("tune: each trial's time is the one `simulate` gives under the same runtime model") {
  for (Runtime runtime : {Runtime::PyTorch, Runtime::Ideal}) {
    INFO(runtime_name(runtime));
    TuneRequest req = request(4, 8, {"ZBVZeroBubble", "1F1B", "Interleaved1F1B"});
    req.runtime = runtime;
    Inputs inputs;
    auto result = tune_schedules(req, tune_trials(req),
                                 [&](const auto& placement, std::uint32_t) { return inputs(req.ranks, placement); });
    REQUIRE(result);
    for (const TuneTrial& t : result->trials) {
      INFO(t.family << " v=" << t.stages_per_rank);
      REQUIRE(t.ran);
      const Schedule s = tune_schedule_of(req, t);
      const Schedule run = schedule_as_run(s, runtime);
      CHECK(has_comms(run) == (runtime == Runtime::PyTorch));
      SimInputs own = inputs(4, s.placement.stage_to_rank).value();
      CHECK(t.iteration_time == simulate_aggregates(run, s.placement.stage_to_rank, own.sim, own.memory).makespan);
    }
  }
  // Where the two differ: ZBV on 4 ranks, 4 microbatches, unit costs (PyTorch's send/recv order waits).
  TuneRequest req = request(4, 4, {"ZBVZeroBubble"});
  Inputs inputs;
  auto with = [&](Runtime r) {
    req.runtime = r;
    return tune_schedules(req, tune_trials(req), [&](const auto& p, std::uint32_t) { return inputs(4, p); })
        ->trials[0]
        .iteration_time;
  };
  CHECK(with(Runtime::Ideal) < with(Runtime::PyTorch));
}

TEST_CASE("tune: the lowering keywords reach PyTorch's runtime lowering, single-stage classes refuse them") {
  // max_active_stages 1: each rank keeps one stage unsharded, so its UNSHARD and RESHARD actions
  // move (the schedule run differs from the default's).
  TuneRequest req = request(4, 8, {"ZBVZeroBubble", "Interleaved1F1B", "1F1B"});
  req.keywords.values.max_active_stages = 1;
  req.keywords.max_active_stages_given = true;
  Inputs inputs;
  auto result = tune_schedules(req, tune_trials(req),
                               [&](const auto& placement, std::uint32_t) { return inputs(req.ranks, placement); });
  REQUIRE(result);
  const TuneTrial& single = find(*result, "1F1B", 1);
  CHECK_FALSE(single.ran);
  CHECK_THAT(single.note,
             Catch::Contains("Schedule1F1B.__init__() got an unexpected keyword argument 'max_active_stages'"));
  for (const char* family : {"ZBVZeroBubble", "Interleaved1F1B"}) {
    const TuneTrial& t = find(*result, family, 2);
    INFO(family << ": " << t.note);
    REQUIRE(t.ran);
    const Schedule s = tune_schedule_of(req, t);
    const Schedule run = schedule_as_run(s, Runtime::PyTorch, req.keywords.values);
    CHECK_FALSE(same_schedule(run, schedule_as_run(s, Runtime::PyTorch)));
    SimInputs own = inputs(4, s.placement.stage_to_rank).value();
    CHECK(t.iteration_time == simulate_aggregates(run, s.placement.stage_to_rank, own.sim, own.memory).makespan);
  }
}

TEST_CASE("tune: under pytorch-liveness a trial's peak is PyTorch's slot count, and the cap counts slots") {
  // Every family fits a cap of 4 under the byte model (ZBV and V-Min hold half a rank's activation
  // per chunk: 4 and 2 microbatches); in slots each chunk's activation counts whole.
  TuneRequest req = request(4, 8, {"1F1B", "ZBH1", "ZBVZeroBubble", "VMin"});
  req.memory_cap = 4;
  auto run = [&] {
    Inputs inputs;
    return tune_schedules(req, tune_trials(req),
                          [&](const auto& placement, std::uint32_t) { return inputs(req.ranks, placement); });
  };
  auto bytes = run();
  REQUIRE(bytes);
  for (const TuneTrial& t : bytes->trials) CHECK(t.fits);
  CHECK(find(*bytes, "ZBVZeroBubble", 2).peak == 4);
  for (LivenessGranularity g : kLivenessGranularities) {
    INFO(liveness_granularity_name(g));
    req.liveness = g;
    auto slots = run();
    REQUIRE(slots);
    REQUIRE(slots->trials.size() == bytes->trials.size());
    for (const TuneTrial& t : slots->trials) {
      INFO(t.family << " v=" << t.stages_per_rank);
      REQUIRE(t.ran);
      const Schedule s = tune_schedule_of(req, t);
      CHECK(t.peak == activation_liveness(s, s.placement.stage_to_rank, t.microbatches, g).peak);
      CHECK(t.fits == (t.peak <= 4));
      // The times are the byte model's: only what the cap counts changed.
      CHECK(t.iteration_time == find(*bytes, t.family, t.stages_per_rank).iteration_time);
    }
    // ZBV's rank 0 runs 8 first-chunk forwards before its first backward: 8 slots at either
    // granularity, over the cap, and ranked after every trial that fits.
    const TuneTrial& zbv = find(*slots, "ZBVZeroBubble", 2);
    CHECK(zbv.peak == 8);
    CHECK_FALSE(zbv.fits);
    CHECK(tune_verdict(zbv, slots->trials.front(), 4, plain) == "over the cap: peak 8 > 4");
    CHECK(slots->trials.back().family == "ZBVZeroBubble");
    // V-Min: 4 stage-microbatch slots, 3 microbatches.
    CHECK(find(*slots, "VMin", 2).peak == (g == LivenessGranularity::StageMicrobatch ? 4 : 3));
  }
}

TEST_CASE("tune: under pytorch-liveness the automatic schedule is searched under the slot cap") {
  for (std::uint32_t cap : {3u, 4u, 6u}) {
    INFO("cap " << cap);
    TuneRequest req = request(4, 8, {"auto"});
    req.memory_cap = cap;
    req.liveness = LivenessGranularity::StageMicrobatch;
    Inputs inputs;
    auto result = tune_schedules(req, tune_trials(req),
                                 [&](const auto& placement, std::uint32_t) { return inputs(req.ranks, placement); });
    REQUIRE(result);
    for (const TuneTrial& t : result->trials) {
      INFO("v=" << t.stages_per_rank);
      REQUIRE(t.ran);  // the search found a schedule under the cap, counted as PyTorch counts it
      CHECK(t.fits);
      const ActivationLiveness live =
          activation_liveness(t.schedule, t.schedule.placement.stage_to_rank, t.microbatches, *req.liveness);
      CHECK(t.peak == live.peak);
      CHECK(t.peak <= cap);
    }
  }
}

TEST_CASE("tune: the whole request's work is counted up front, and a request over its budget is refused") {
  TuneRequest req;
  req.ranks = 64;
  req.global_batch = 5040;  // 60 divisors: 840 trials under the default families
  const std::vector<TuneTrial> trials = tune_trials(req);
  try {
    (void)tune_work(req, trials);
    FAIL("a request of about 90 s of work passed the default budget of 60 s");
  } catch (const UserError& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::Matchers::Contains("over the default budget of 60 s"));
    CHECK_THAT(what, Catch::Matchers::Contains("a --global-batch with fewer divisors (it has 60)"));
    CHECK_THAT(what, Catch::Matchers::Contains("raise --time-budget"));
  }
  // tune_schedules asks it before it asks for any input.
  bool asked = false;
  CHECK_THROWS_AS(tune_schedules(req, trials,
                                 [&](const std::vector<std::uint32_t>&, std::uint32_t) -> std::optional<SimInputs> {
                                   asked = true;
                                   return SimInputs{};
                                 }),
                  UserError);
  CHECK_FALSE(asked);
  req.time_budget_s = 200;  // given: the searches share what the trials leave
  const TuneWork w = tune_work(req, trials);
  CHECK(w.budget_s == 200);
  CHECK(w.searches == 120);
  CHECK(w.trials_s > 60);
  CHECK(w.trials_s < 200);
  CHECK(w.search_s == Approx((200 - w.trials_s) / 120));
}

TEST_CASE("tune: without a budget each search keeps its 1 s, and the trials' count grows with the schedules' size") {
  TuneRequest req;
  req.ranks = 4;
  req.microbatches = 8;
  const TuneWork small = tune_work(req, tune_trials(req));
  CHECK(small.budget_s == kDefaultTuneBudget);
  CHECK(small.searches == 2);
  CHECK(small.search_s == 1.0);
  req.microbatches = 80;
  const TuneWork bigger = tune_work(req, tune_trials(req));
  CHECK(bigger.trials_s == Approx(small.trials_s * 10));
  req.runtime = Runtime::Ideal;  // nothing lowered: a third of the actions
  CHECK(tune_work(req, tune_trials(req)).trials_s == Approx(bigger.trials_s / 3));
}

}  // namespace
}  // namespace ppsched
