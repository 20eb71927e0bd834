// The validator on the corpus: every schedule PyTorch generates correctly validates clean,
// PyTorch's invalid 1F1B pipeline_order is flagged, and every negative case is flagged by the
// rule its mutation calls for, including those PyTorch accepts.
#include <functional>
#include <iostream>
#include <map>
#include <set>

#include "check/check.hpp"
#include "check/rules_impl.hpp"
#include "diag/render.hpp"
#include "parse/pytorch_csv.hpp"
#include "sim/aggregate.hpp"
#include "sim/timed.hpp"
#include "support/catch.hpp"
#include "support/corpus.hpp"
#include "support/corpus_check.hpp"

using namespace ppsched;
using namespace ppsched::test;

namespace {

// Rule ids reported for a file, checked against the manifest's configuration.
std::set<std::string> reported(const std::filesystem::path& file, const nlohmann::json& cfg, bool compute_only) {
  std::set<std::string> ids;
  for (const auto& d : corpus_errors(file, cfg, compute_only)) ids.insert(d.rule);
  return ids;
}

std::string expected_rule(const nlohmann::json& n) {
  static const std::map<std::string, std::string> kRule = {
      {"backward_before_forward", "backward-before-forward"},
      {"drop_forward", "missing-forward"},
      {"drop_recv", "send-without-recv"},
      {"drop_send", "recv-without-send"},
      {"duplicate_backward", "duplicate-action"},
      {"duplicate_forward", "duplicate-action"},
      {"duplicate_send", "duplicate-action"},
      {"early_backward_deadlock", "deadlock"},
      {"extra_microbatch", "microbatch-out-of-range"},
      {"malformed_0X1", "action-syntax"},
      {"malformed_F0", "action-syntax"},
      {"malformed_lowercase", "action-syntax"},
      {"malformed_overlap_type", "action-syntax"},
      {"malformed_trailing_junk", "action-noncanonical"},
      {"missing_rank", "rank-count"},
      {"noncanonical_leading_zero", "action-noncanonical"},
      {"noncanonical_whitespace", "action-noncanonical"},
      {"recv_before_send_deadlock", "deadlock"},
      {"send_before_compute", "send-before-compute"},
      {"stage_on_wrong_rank", "stage-on-wrong-rank"},
      {"stage_out_of_range", "stage-out-of-range"},
      {"w_before_i", "weight-before-input-grad"},
  };
  std::string m = n["mutation"];
  if (m == "drop_action") {  // "removed 1B0 at rank 1, index 1": which kind went missing
    std::string detail = n["mutation_detail"];
    return detail.find("F") < detail.find(" at") && detail.find("B") == std::string::npos &&
                   detail.find("I") == std::string::npos && detail.find("W") == std::string::npos
               ? "missing-forward"
               : "missing-backward";
  }
  auto it = kRule.find(m);
  return it == kRule.end() ? "" : it->second;
}

}  // namespace

TEST_CASE("every corpus schedule PyTorch generates correctly validates clean") {
  std::size_t total = 0, clean = 0, flagged_1f1b = 0, invalid_1f1b = 0;
  for (const auto& c : manifest()["configs"]) {
    for (const auto& [key, name] : c["files"].items()) {
      if (key.find("simulated") != std::string::npos) continue;  // a timeline, not a schedule
      auto ids = reported(corpus_dir() / "configs" / name.get<std::string>(), c, false);
      if (c["schedule_class"] == "Schedule1F1B" && key == "compute_only") {
        ++invalid_1f1b;  // PyTorch's invalid pipeline_order: must be flagged
        flagged_1f1b += !ids.empty();
        CHECK_FALSE(ids.empty());
        continue;
      }
      ++total;
      INFO(name.get<std::string>());
      CHECK(ids.empty());
      clean += ids.empty();
    }
  }
  std::cout << "conformance: " << clean << "/" << total << " corpus schedules validate clean; " << flagged_1f1b << "/"
            << invalid_1f1b << " invalid 1F1B pipeline_order files flagged\n";
  CHECK(clean == total);
  CHECK(flagged_1f1b == invalid_1f1b);
}

TEST_CASE("every negative case is flagged by the rule its mutation calls for") {
  std::size_t total = 0, flagged = 0, right_rule = 0;
  std::map<std::string, std::size_t> misses;
  for (const auto& n : negative_cases()) {
    if (n["mutation"] == "illegal_constructor_args") continue;
    ++total;
    std::string want = expected_rule(n);
    bool compute_only = n["input_format"] == "compute_only";
    auto ids = reported(corpus_dir() / "negative" / n["file"].get<std::string>(), n, compute_only);
    INFO(n["id"].get<std::string>() << " expects " << want);
    if (ids.empty()) {
      // Some "early backward" mutations only move a backward across idle cells, or to a point
      // where it merely waits longer: the schedule is still valid and finishes (PyTorch accepts
      // them too). Flagging them would be a false positive; anything else unflagged is a miss.
      CHECK(n["mutation"] == "early_backward_deadlock");
      CHECK(n["pytorch_verdict"] == "accepted");
      ++misses[n["mutation"].get<std::string>() + " (valid: it finishes, PyTorch accepts it)"];
      continue;
    }
    CHECK(ids.count(want) == 1);
    flagged += 1;
    right_rule += ids.count(want);
  }
  std::cout << "conformance: " << flagged << "/" << total << " negative cases flagged, " << right_rule
            << " by the expected rule\n";
  for (const auto& [m, count] : misses) std::cout << "  not flagged: " << m << " x" << count << "\n";
  CHECK(right_rule == flagged);
}

namespace {

std::size_t aggregate_runs = 0, aggregate_fast_runs = 0;

// The deadlock verdict of one schedule three ways: the timed simulator (unit costs and uneven
// costs), its verdict-only run (what the validator uses), and the validator's deadlock rule.
// Returns whether it deadlocks; every way must say the same, with the same stuck heads.
bool deadlock_verdicts_agree(const std::filesystem::path& file, const nlohmann::json& cfg) {
  DiagnosticSink parse_sink;
  CsvReadOptions lenient;
  lenient.lenient = true;
  auto parsed = read_pytorch_csv(file.string(), lenient, parse_sink);
  if (!parsed) return false;  // unreadable even leniently: nothing to simulate
  const Schedule& s = parsed->schedule;
  auto placement = cfg["stage_to_rank"].get<std::vector<std::uint32_t>>();
  const std::uint32_t stages = cfg["num_stages"];
  placement.resize(std::max<std::size_t>(placement.size(), stages), 0);
  auto verdict = find_stuck(s, placement);
  for (int uneven = 0; uneven < 2; ++uneven) {
    TimedOptions opt;
    KindCosts costs = unit_costs();
    if (uneven) {  // the verdict must not depend on costs
      costs[static_cast<std::size_t>(ActionKind::F)] = 2;
      costs[static_cast<std::size_t>(ActionKind::B)] = 3.5;
      costs[static_cast<std::size_t>(ActionKind::W)] = 0.25;
      costs[static_cast<std::size_t>(ActionKind::SendF)] = 7;
    }
    const std::uint32_t ranks = cfg["ranks"];
    opt.costs = CostModel::for_pipeline(ranks, stages, costs);
    const MemoryModel memory;
    try {
      Timeline t = simulate_timed(s, placement, opt);
      CHECK(verdict.empty());
      AggregateStats stats;
      const SimAnalysis want = analyze(s, t, memory);
      CHECK(same_aggregates(want, simulate_aggregates(s, placement, opt, memory, &stats)));
      // Two threads, each with half of the ranks (the split a large schedule gets), agree too.
      if (s.rank_count() > 1)
        CHECK(same_aggregates(want, simulate_aggregates_split(s, placement, opt, memory, s.rank_count() / 2)));
      // The ring run never stops short of a schedule that finishes, unless an action is duplicated
      // (a second SEND finds its RECV long gone: simulate_timed pairs it with that RECV again).
      if (file.filename().string().find("duplicate") == std::string::npos) CHECK_FALSE(stats.stuck);
      ++aggregate_runs;
      aggregate_fast_runs += !stats.fell_back;
    } catch (const TimedDeadlock& d) {
      CHECK_THROWS_AS(simulate_aggregates(s, placement, opt, memory), TimedDeadlock);
      if (s.rank_count() > 1)
        CHECK_THROWS_AS(simulate_aggregates_split(s, placement, opt, memory, s.rank_count() / 2), TimedDeadlock);
      CHECK_FALSE(try_simulate_aggregates(s, placement, opt, memory).has_value());
      REQUIRE(d.stuck().size() == verdict.size());
      for (std::size_t i = 0; i < verdict.size(); ++i) {
        CHECK(d.stuck()[i].rank == verdict[i].rank);
        CHECK(d.stuck()[i].step == verdict[i].step);
        CHECK(d.stuck()[i].waiting_for == verdict[i].waiting_for);
      }
    }
  }
  CheckContext ctx;
  ctx.schedule = &s;
  ctx.file = file.filename().string();
  ctx.ranks = cfg["ranks"];
  ctx.stages = stages;
  ctx.microbatches = cfg["microbatches"];
  ctx.stage_to_rank = placement;
  ctx.placement_inferred = false;
  DiagnosticSink sink;
  run_checks(ctx, sink, {{"deadlock", RuleLevel::Error}});
  bool rule = false;
  for (const auto& d : sink.diagnostics()) rule |= d.rule == "deadlock";
  CHECK(rule == !verdict.empty());
  return !verdict.empty();
}

}  // namespace

TEST_CASE("the deadlock rule reports a deadlock exactly when the timed simulator cannot finish") {
  std::size_t files = 0, deadlocks = 0;
  for (const auto& c : manifest()["configs"])
    for (const auto& [key, name] : c["files"].items()) {
      if (key.find("simulated") != std::string::npos) continue;
      INFO(name.get<std::string>());
      ++files;
      deadlocks += deadlock_verdicts_agree(corpus_dir() / "configs" / name.get<std::string>(), c);
    }
  for (const auto& n : negative_cases()) {
    if (n["mutation"] == "illegal_constructor_args") continue;
    INFO(n["id"].get<std::string>());
    ++files;
    deadlocks += deadlock_verdicts_agree(corpus_dir() / "negative" / n["file"].get<std::string>(), n);
  }
  std::cout << "conformance: deadlock verdicts agree (simulator, verdict-only run, validator) on " << files
            << " corpus files, " << deadlocks << " of them deadlocks\n";
  CHECK(deadlocks > 0);
  // Malformed files (duplicated actions) may take the Timeline path; the corpus's schedules must not.
  std::cout << "conformance: aggregates equal analyze() on " << aggregate_runs << " runs, " << aggregate_fast_runs
            << " of them without a Timeline\n";
  CHECK(aggregate_fast_runs * 10 >= aggregate_runs * 9);
}

namespace {

// Calls f(file, parsed, context) for every readable corpus schedule (the configs' files but the
// simulated ones, and the negatives but those PyTorch's constructor refuses), where context() makes
// a fresh CheckContext with the sizes and placement its config states.
using CorpusVisit = std::function<void(const std::filesystem::path& file, const ParsedSchedule& parsed,
                                       const std::function<CheckContext()>& context)>;
void for_each_corpus_schedule(const CorpusVisit& f) {
  auto visit = [&](const std::filesystem::path& file, const nlohmann::json& cfg) {
    DiagnosticSink read;
    auto parsed = read_pytorch_csv(file.string(), {}, read);
    if (!parsed) return;
    f(file, *parsed, [&] {
      CheckContext ctx = context_for(parsed->schedule, cfg["stage_to_rank"].get<std::vector<std::uint32_t>>(),
                                     file.filename().string(), &parsed->source);
      ctx.ranks = cfg["ranks"];
      ctx.stages = cfg["num_stages"];
      ctx.microbatches = cfg["microbatches"];
      return ctx;
    });
  };
  for (const auto& c : manifest()["configs"])
    for (const auto& [key, name] : c["files"].items())
      if (key.find("simulated") == std::string::npos) visit(corpus_dir() / "configs" / name.get<std::string>(), c);
  for (const auto& n : negative_cases())
    if (n["mutation"] != "illegal_constructor_args") visit(corpus_dir() / "negative" / n["file"].get<std::string>(), n);
}

}  // namespace

TEST_CASE("check_structure: validate's structural errors, counted alike, clean files proven clean without the index") {
  std::set<std::string_view> structural(structural_rule_ids().begin(), structural_rule_ids().end());
  std::size_t files = 0, proven = 0;
  for_each_corpus_schedule([&](const std::filesystem::path& file, const ParsedSchedule&, const auto& context) {
    DiagnosticSink all(1000000);
    run_checks(context(), all);
    std::size_t want = 0;
    for (const auto& d : all.diagnostics()) want += d.severity == Severity::Error && structural.count(d.rule);
    DiagnosticSink first(1);
    const CheckContext ctx = context();
    INFO(file.filename().string());
    CHECK(check_structure(ctx, first) == want);
    const bool clean = check::provably_structurally_clean(ctx);
    CHECK((!clean || want == 0));  // never looser than the rules
    ++files;
    proven += clean;
    if (want == 0) CHECK(clean);  // and the corpus takes the fast way
  });
  std::cout << "conformance: check_structure agrees with validate on " << files << " files, " << proven
            << " proven clean in one pass\n";
  CHECK(proven > 0);
}

TEST_CASE("run_checks: the rules the proof skips would have said nothing, on the corpus and its negatives") {
  std::size_t files = 0, comms_proven = 0;
  for_each_corpus_schedule([&](const std::filesystem::path& file, const ParsedSchedule& parsed, const auto& context) {
    INFO(file.filename().string());
    // Every rule through the index (a context whose index is built runs them all) ...
    const CheckContext every = context();
    every.index = std::make_shared<const check::ActionIndex>(every);
    DiagnosticSink all(1000000);
    run_checks(every, all);
    // ... says what the proven run says.
    const CheckContext proven = context();
    DiagnosticSink fast(1000000);
    run_checks(proven, fast);
    std::string want, got;
    for (const auto& d : all.diagnostics()) want += render_one_line(d) + "\n";
    for (const auto& d : fast.diagnostics()) got += render_one_line(d) + "\n";
    CHECK(got == want);
    const check::CleanProof proof = check::prove_clean(context());
    if (proof.comms) {  // never looser than the send/recv rules
      for (const auto& d : all.diagnostics())
        CHECK_FALSE((d.rule == "send-without-recv" || d.rule == "recv-without-send" ||
                     d.rule == "send-before-compute" || d.rule == "comm-between-colocated-stages"));
      comms_proven += has_comms(parsed.schedule);
    }
    ++files;
  });
  std::cout << "conformance: run_checks with the proof says what every rule says on " << files << " files; "
            << comms_proven << " files with comms proven clean of send/recv findings\n";
  CHECK(comms_proven > 0);
}

// What validate hands the simulation: the proof's census instead of its own pass over the actions.
// On every corpus file the proof finds clean, the numbers (or the deadlock) are the same.
TEST_CASE("the proof's census stands in for the simulator's pass on the corpus, with the same numbers") {
  std::size_t files = 0, read = 0;
  for_each_corpus_schedule([&](const std::filesystem::path& file, const ParsedSchedule& parsed, const auto& context) {
    const CheckContext ctx = context();
    const check::CleanProof proof = check::prove_clean(ctx);
    if (!proof.census) return;
    INFO(file.filename().string());
    ++files;
    const Schedule& s = parsed.schedule;
    TimedOptions opt;
    opt.costs = CostModel::for_pipeline(ctx.ranks, ctx.stages);
    const MemoryModel memory;
    for (std::size_t mid : {std::size_t{0}, s.rank_count() / 2}) {
      AggregateStats stats;
      try {
        const SimAnalysis want = simulate_aggregates_split(s, ctx.stage_to_rank, opt, memory, mid);
        CHECK(same_aggregates(
            want, simulate_aggregates_split(s, ctx.stage_to_rank, opt, memory, mid, &stats, proof.census.get())));
        CHECK((stats.census || stats.fell_back));
        read += stats.census;
      } catch (const TimedDeadlock&) {
        CHECK_THROWS_AS(simulate_aggregates_split(s, ctx.stage_to_rank, opt, memory, mid, &stats, proof.census.get()),
                        TimedDeadlock);
      }
    }
  });
  std::cout << "conformance: the census stands in for the simulator's pass on " << files << " files (read " << read
            << " times)\n";
  CHECK(read > 0);
}
