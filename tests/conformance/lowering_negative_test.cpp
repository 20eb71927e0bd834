// The corpus's mutated schedules get PyTorch's verdicts from pytorch_validate and add_send_recv:
// the same acceptances, and the same first line of each message. Where PyTorch fails with a bare
// KeyError, ppsched explains the failure in words and names the KeyError at the end.
#include <iostream>

#include "parse/pytorch_csv.hpp"
#include "passes/passes.hpp"
#include "support/catch.hpp"
#include "support/corpus.hpp"

using namespace ppsched;
using namespace ppsched::test;

namespace {

// PyTorch parses what ppsched's lenient reader accepts.
std::optional<Schedule> load_negative(const nlohmann::json& n) {
  DiagnosticSink sink;
  CsvReadOptions opt;
  opt.lenient = true;
  auto path = corpus_dir() / "negative" / n["file"].get<std::string>();
  auto parsed = read_pytorch_csv(path.string(), opt, sink);
  if (!parsed) return std::nullopt;
  return std::move(parsed->schedule);
}

// Runs `pass` and says whether the outcome is PyTorch's `verdict`.
template <class F>
bool same_verdict(const nlohmann::json& verdict, F&& pass) {
  std::string got;
  try {
    pass();
    got = "ok";
  } catch (const PassError& e) {
    got = e.what();
  }
  INFO(got);
  if (verdict["ok"].get<bool>()) return got == "ok";
  const std::string exception = verdict["exception"];
  const std::string first_line = verdict["message_first_line"];
  if (exception == "KeyError") return got.ends_with("(PyTorch: KeyError: " + first_line + ")");
  return got == first_line;
}

}  // namespace

TEST_CASE("pytorch_validate gives PyTorch's verdict on every negative case") {
  std::size_t total = 0, same = 0;
  for (const auto& n : negative_cases()) {
    if (!n.contains("validate")) continue;
    auto s = load_negative(n);
    if (!s) continue;
    ++total;
    INFO(n["id"].get<std::string>());
    const auto ranks = n["ranks"].get<std::uint32_t>();
    const auto stages = n["num_stages"].get<std::uint32_t>();
    const auto microbatches = n["microbatches"].get<std::uint32_t>();
    bool ok = same_verdict(n["validate"], [&] {
      auto map = pytorch_validate(*s, ranks, stages, microbatches);
      CHECK(map == n["stage_to_rank"].get<std::vector<std::uint32_t>>());
    });
    CHECK(ok);
    same += ok;
  }
  std::cout << "conformance: " << same << "/" << total << " negative cases get PyTorch's validation verdict\n";
  CHECK(total > 150);
  CHECK(same == total);
}

TEST_CASE("validation errors that PyTorch follows with the grid carry the step to mark") {
  std::size_t checked = 0;
  for (const auto& n : negative_cases()) {
    if (!n.contains("validate") || n["validate"]["ok"].get<bool>()) continue;
    const std::string message = n["validate"]["message"];
    auto marker = message.find("\n\nFull pipeline schedule:\n");
    auto s = load_negative(n);
    if (!s) continue;
    INFO(n["id"].get<std::string>());
    try {
      pytorch_validate(*s, n["ranks"], n["num_stages"], n["microbatches"]);
      FAIL("accepted");
    } catch (const PassError& e) {
      CHECK(e.grid_step().has_value() == (marker != std::string::npos));
      if (e.grid_step()) {
        // The marked row of PyTorch's grid is the step in the message ("Rank r, step t: ...").
        std::string first = n["validate"]["message_first_line"];
        auto at = first.find(", step ") + 7;
        CHECK(std::stoul(first.substr(at)) == *e.grid_step());
        ++checked;
      }
    }
  }
  CHECK(checked >= 30);
}

TEST_CASE("add_send_recv gives PyTorch's verdict on every negative case") {
  std::size_t total = 0, same = 0;
  for (const auto& n : negative_cases()) {
    if (!n.contains("add_send_recv")) continue;
    auto s = load_negative(n);
    if (!s) continue;
    ++total;
    INFO(n["id"].get<std::string>());
    const auto map = n["stage_to_rank"].get<std::vector<std::uint32_t>>();
    const auto stages = n["num_stages"].get<std::uint32_t>();
    bool ok = same_verdict(n["add_send_recv"], [&] { add_send_recv(*s, map, stages); });
    CHECK(ok);
    same += ok;
  }
  std::cout << "conformance: " << same << "/" << total << " negative cases get PyTorch's add_send_recv verdict\n";
  CHECK(total > 100);
  CHECK(same == total);
}
