// simulate_pytorch_steps against PyTorch's `_simulate_comms_compute`, for every config of the
// corpus and every negative case whose input is a send_recv file:
//
//   <id>.simulated.csv            = _simulate_comms_compute(<id>.send_recv.csv), byte for byte
//   <id>.runtime_order.simulated  = the same for 1F1B's runtime order
//   simulate_send_recv            steps (longest timeline), per-rank lengths, idle slots
//   negative send_recv variants   PyTorch's verdict: ok with the same step count, or the deadlock
//                                 with its printed WIP grid and stuck ranks
//
// and, where PyTorch cannot simulate (DualPipeV's OVERLAP_F_B; UNSHARD, RESHARD and REDUCE_GRAD in
// the runtime lowering), that ppsched's extensions simulate the schedule without losing an action.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "ir/action_text.hpp"
#include "parse/pytorch_csv.hpp"
#include "passes/passes.hpp"
#include "sim/pytorch_steps.hpp"
#include "support/catch.hpp"
#include "support/corpus.hpp"

using namespace ppsched;
using namespace ppsched::test;

namespace {

Schedule load(const std::filesystem::path& path, bool lenient = false) {
  DiagnosticSink sink;
  CsvReadOptions opt;
  opt.lenient = lenient;
  auto parsed = read_pytorch_csv(path.string(), opt, sink);
  INFO(path.string());
  REQUIRE(parsed);
  return std::move(parsed->schedule);
}

std::vector<std::uint32_t> stage_to_rank(const nlohmann::json& j) {
  return j["stage_to_rank"].get<std::vector<std::uint32_t>>();
}

std::size_t steps(const Schedule& timeline) {
  std::size_t n = 0;
  for (const auto& r : timeline.ranks) n = std::max(n, r.actions.size());
  return n;
}

std::vector<std::size_t> per_rank_len(const Schedule& timeline) {
  std::vector<std::size_t> out;
  for (const auto& r : timeline.ranks) out.push_back(r.actions.size());
  return out;
}

std::size_t idle_slots(const Schedule& timeline) {
  std::size_t n = 0;
  for (const auto& r : timeline.ranks)
    n += static_cast<std::size_t>(
        std::count_if(r.actions.begin(), r.actions.end(), [](const Action& a) { return a.is_idle(); }));
  return n;
}

// Each rank's actions as text, idle steps left out: a timeline must hold exactly its input.
std::vector<std::vector<std::string>> busy_text(const Schedule& s) {
  std::vector<std::vector<std::string>> out;
  for (const auto& r : s.ranks) {
    auto& row = out.emplace_back();
    for (const Action& a : r.actions)
      if (!a.is_idle()) row.push_back(action_text(a, s.sub_actions));
  }
  return out;
}

// PyTorch's `print("WIP comms schedule:\n", grid)` followed by "rank=<r> next action= <a>" lines,
// taken apart: the grid's cells (rows = steps, columns = ranks) and the stuck lines.
struct WipPrint {
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> stuck_lines;
};

std::string trim(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  std::size_t b = s.find_first_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b);
}

WipPrint parse_wip(const std::string& stdout_text, std::size_t ranks) {
  const std::string prefix = "WIP comms schedule:\n ";  // print() puts a space between its arguments
  REQUIRE(stdout_text.starts_with(prefix));
  std::vector<std::string> lines;
  std::size_t pos = prefix.size();
  while (pos < stdout_text.size()) {
    std::size_t eol = stdout_text.find('\n', pos);
    if (eol == std::string::npos) eol = stdout_text.size();
    lines.push_back(stdout_text.substr(pos, eol - pos));
    pos = eol + 1;
  }
  REQUIRE(!lines.empty());
  // Column starts from the header's "Rank i" labels; rows line up with them.
  std::vector<std::size_t> start;
  std::size_t from = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    std::size_t at = lines[0].find("Rank " + std::to_string(r), from);
    REQUIRE(at != std::string::npos);
    start.push_back(at);
    from = at + 1;
  }
  WipPrint out;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.starts_with("Step ")) {
      auto& row = out.cells.emplace_back();
      for (std::size_t r = 0; r < ranks; ++r) {
        std::size_t b = start[r], e = r + 1 < ranks ? start[r + 1] : line.size();
        row.push_back(b < line.size() ? trim(line.substr(b, std::min(e, line.size()) - b)) : "");
      }
    } else if (line.starts_with("rank=")) {
      out.stuck_lines.push_back(line);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("simulating every send_recv file reproduces PyTorch's simulated.csv byte for byte") {
  std::size_t total = 0, same = 0, steps_total = 0, steps_same = 0;
  for (const auto& config : manifest()["configs"]) {
    const auto& files = config["files"];
    const bool runtime_order = files.contains("runtime_order_simulated");
    if (!files.contains("simulated") && !runtime_order) continue;
    ++total;
    const std::string id = config["id"];
    INFO(id);
    const auto& dir = corpus_dir() / "configs";
    const auto input = load(dir / files[runtime_order ? "runtime_order_send_recv" : "send_recv"].get<std::string>());
    const std::string expected =
        read_file(dir / files[runtime_order ? "runtime_order_simulated" : "simulated"].get<std::string>());
    const auto& verdict = runtime_order ? config["runtime_order"]["simulate_send_recv"] : config["simulate_send_recv"];
    REQUIRE(verdict["ok"].get<bool>());

    const Schedule timeline =
        simulate_pytorch_steps(input, stage_to_rank(config), config["num_stages"].get<std::uint32_t>());
    const std::string got = to_pytorch_csv(timeline);
    CHECK(got == expected);
    same += got == expected;

    ++steps_total;
    const bool steps_match = steps(timeline) == verdict["steps"].get<std::size_t>() &&
                             per_rank_len(timeline) == verdict["per_rank_len"].get<std::vector<std::size_t>>() &&
                             idle_slots(timeline) == verdict["idle_slots"].get<std::size_t>();
    CHECK(steps(timeline) == verdict["steps"].get<std::size_t>());
    CHECK(per_rank_len(timeline) == verdict["per_rank_len"].get<std::vector<std::size_t>>());
    CHECK(idle_slots(timeline) == verdict["idle_slots"].get<std::size_t>());
    steps_same += steps_match;
  }
  std::cout << "conformance: " << same << "/" << total << " simulated.csv files match byte for byte\n";
  std::cout << "conformance: " << steps_same << "/" << steps_total
            << " simulations have PyTorch's steps, per-rank lengths and idle slots\n";
  CHECK(total == 95);
  CHECK(same == total);
  CHECK(steps_same == steps_total);
}

TEST_CASE("PyTorch's own test vectors: simulated step counts") {
  const nlohmann::json vectors =
      nlohmann::json::parse(read_file(corpus_dir() / "upstream-artifacts" / "test_vectors.json"));
  std::size_t total = 0;
  for (const auto& c : vectors["send_recv_cases"]) {
    INFO(c["name"].get<std::string>());
    Schedule s;
    const auto& comms = c["comms"];
    s.ranks.resize(comms.size());
    for (const auto& [rank, row] : comms.items())
      for (const auto& cell : row) {
        auto a = parse_action(cell.get<std::string>(), s.sub_actions);
        REQUIRE(a);
        s.ranks[std::stoul(rank)].actions.push_back(*a);
      }
    CHECK(steps(simulate_pytorch_steps(s, stage_to_rank(c), c["num_stages"].get<std::uint32_t>())) ==
          c["simulated_steps"].get<std::size_t>());
    ++total;
  }
  // zb1p: merge_bw, then add_send_recv with stage s on rank s % 2 and 4 stages: 113 steps.
  for (const auto& c : vectors["csv_regression"]) {
    if (!c.contains("comms_file")) continue;
    INFO(c["comms_file"].get<std::string>());
    const Schedule s = load(corpus_dir() / "upstream-artifacts" / c["comms_file"].get<std::string>());
    CHECK(steps(simulate_pytorch_steps(s, {0, 1, 0, 1}, 4)) == 113);
    ++total;
  }
  CHECK(total == 3);
}

TEST_CASE("DualPipeV's send_recv files (PyTorch: KeyError -1 on OVERLAP_F_B) simulate with the extension") {
  std::size_t total = 0;
  for (const auto& config : manifest()["configs"]) {
    if (!config.contains("simulate_send_recv") || config["simulate_send_recv"]["ok"].get<bool>()) continue;
    const std::string id = config["id"];
    INFO(id);
    CHECK(config["simulate_send_recv"]["exception"] == "KeyError");
    CHECK(config["simulate_send_recv"]["message"] == "-1");
    const Schedule input = load(corpus_dir() / "configs" / config["files"]["send_recv"].get<std::string>());
    Schedule timeline;
    REQUIRE_NOTHROW(
        timeline = simulate_pytorch_steps(input, stage_to_rank(config), config["num_stages"].get<std::uint32_t>()));
    CHECK(busy_text(timeline) == busy_text(input));
    ++total;
  }
  std::cout << "conformance: " << total << " DualPipeV send_recv files simulated (PyTorch: KeyError -1)\n";
  CHECK(total == 8);
}

TEST_CASE("compute_comms files (PyTorch: Unsupported action type) simulate with the extension") {
  // PyTorch's runtime lowering carries UNSHARD/RESHARD/REDUCE_GRAD, which its simulator rejects.
  std::size_t total = 0;
  for (const auto& config : manifest()["configs"]) {
    if (!config["files"].contains("compute_comms")) continue;
    const std::string id = config["id"];
    INFO(id);
    const auto& verdict = config["simulate_compute_comms"];
    CHECK_FALSE(verdict["ok"].get<bool>());
    const Schedule input = load(corpus_dir() / "configs" / config["files"]["compute_comms"].get<std::string>());
    Schedule timeline;
    REQUIRE_NOTHROW(
        timeline = simulate_pytorch_steps(input, stage_to_rank(config), config["num_stages"].get<std::uint32_t>()));
    CHECK(busy_text(timeline) == busy_text(input));
    ++total;
  }
  std::cout << "conformance: " << total << " compute_comms files simulated (PyTorch: Unsupported action type)\n";
  CHECK(total == 92);
}

TEST_CASE("negative send_recv files get PyTorch's simulate verdict") {
  // PyTorch's verdicts on mutated send_recv files: ok (a duplicated SEND), with its step count;
  // ValueError "Schedule is not progressing" (a dropped SEND or RECV), after printing the WIP grid
  // and the stuck ranks, which must match ours cell for cell; or IndexError "list index out of
  // range" (a RECV moved before the SEND it needs, a SEND moved before its F). The IndexError is
  // still this deadlock: PyTorch's `_format_pipeline_order` computes its column widths from
  // zip(step_labels, *rows), which has min(steps, ranks) entries, so printing a WIP grid with fewer
  // steps than ranks crashes before the ValueError is raised. ppsched reports the deadlock
  // (SimDeadlock, with the partial timeline and the stuck ranks); the check here is that it happens
  // with fewer steps than ranks, exactly when PyTorch's printer crashes.
  std::size_t total = 0, same = 0, ok = 0, deadlocks = 0, index_errors = 0;
  for (const auto& n : negative_cases()) {
    if (!n["input_format"].get<std::string>().starts_with("compute_comms") || !n.contains("simulate")) continue;
    ++total;
    const std::string id = n["id"];
    INFO(id);
    const Schedule input = load(corpus_dir() / "negative" / n["file"].get<std::string>(), /*lenient=*/true);
    const auto& verdict = n["simulate"];
    bool match = false;
    try {
      const Schedule timeline = simulate_pytorch_steps(input, stage_to_rank(n), n["num_stages"].get<std::uint32_t>());
      INFO("ppsched: ok, " << steps(timeline) << " steps");
      CHECK(verdict["ok"].get<bool>());
      match = verdict["ok"].get<bool>() && steps(timeline) == verdict["steps"].get<std::size_t>();
      CHECK(match);
      ok += match;
    } catch (const SimDeadlock& e) {
      INFO("ppsched: deadlock");
      REQUIRE_FALSE(verdict["ok"].get<bool>());
      const std::string exception = verdict["exception"];
      const std::size_t ranks = e.partial().rank_count();
      if (exception == "ValueError") {
        CHECK(verdict["message"] == e.what());
        CHECK(steps(e.partial()) >= ranks);
        // The printed grid and stuck ranks.
        const WipPrint wip = parse_wip(verdict["stdout"].get<std::string>(), ranks);
        std::vector<std::vector<std::string>> cells(steps(e.partial()), std::vector<std::string>(ranks));
        for (std::size_t r = 0; r < ranks; ++r)
          for (std::size_t t = 0; t < e.partial().ranks[r].actions.size(); ++t)
            cells[t][r] = action_text(e.partial().ranks[r].actions[t], e.partial().sub_actions);
        std::vector<std::string> stuck_lines;
        for (const auto& st : e.stuck())
          stuck_lines.push_back("rank=" + std::to_string(st.rank) + " next action= " +
                                action_text(input.ranks[st.rank].actions[st.step], input.sub_actions));
        CHECK(wip.cells == cells);
        CHECK(wip.stuck_lines == stuck_lines);
        match = wip.cells == cells && wip.stuck_lines == stuck_lines;
        deadlocks += match;
      } else {
        CHECK(exception == "IndexError");
        CHECK(steps(e.partial()) < ranks);
        match = exception == "IndexError" && steps(e.partial()) < ranks;
        index_errors += match;
      }
    }
    same += match;
  }
  std::cout << "conformance: " << same << "/" << total << " negative send_recv files get PyTorch's simulate verdict ("
            << ok << " ok with its step count, " << deadlocks << " deadlocks with its WIP grid, " << index_errors
            << " deadlocks where PyTorch's grid printer raises IndexError)\n";
  CHECK(total == 45);
  CHECK(same == total);
}

TEST_CASE("negative compute_only files, lowered with add_send_recv, get PyTorch's simulate step count") {
  // The harness simulated `_add_send_recv` of each mutated compute order that lowered. Where
  // PyTorch simulated it, the step count must match; where it could not (REDUCE_GRAD in GPipe's and
  // 1F1B's orders: "Unsupported action type"; DualPipeV's OVERLAP_F_B: KeyError -1), ppsched's
  // extensions simulate it.
  std::size_t total = 0, same = 0, extended = 0;
  for (const auto& n : negative_cases()) {
    if (n["input_format"] != "compute_only" || !n.contains("simulate")) continue;
    const std::string id = n["id"];
    INFO(id);
    const Schedule compute = load(corpus_dir() / "negative" / n["file"].get<std::string>(), /*lenient=*/true);
    const auto num_stages = n["num_stages"].get<std::uint32_t>();
    const Schedule lowered = add_send_recv(compute, stage_to_rank(n), num_stages);
    const auto& verdict = n["simulate"];
    if (verdict["ok"].get<bool>()) {
      ++total;
      const std::size_t got = steps(simulate_pytorch_steps(lowered, stage_to_rank(n), num_stages));
      CHECK(got == verdict["steps"].get<std::size_t>());
      same += got == verdict["steps"].get<std::size_t>();
    } else {
      const std::string message = verdict["message"];
      CHECK((message == "-1" || message.starts_with("Unsupported action type")));
      Schedule timeline;
      CHECK_NOTHROW(timeline = simulate_pytorch_steps(lowered, stage_to_rank(n), num_stages));
      CHECK(busy_text(timeline) == busy_text(lowered));
      ++extended;
    }
  }
  std::cout << "conformance: " << same << "/" << total
            << " lowered negative compute_only files have PyTorch's simulated step count (" << extended
            << " more simulated only by the extensions)\n";
  CHECK(total == 68);
  CHECK(same == total);
}
