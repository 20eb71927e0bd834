// Every PyTorch config of the corpus, synthesized by ppsched, equals PyTorch's own compute-only
// CSV byte for byte. For 1F1B the default is the order its runtime executes (runtime_order);
// --pytorch-compat reproduces PyTorch's invalid pipeline_order. Constructor rejections match.
#include <iostream>

#include "parse/pytorch_csv.hpp"
#include "passes/passes.hpp"
#include "support/catch.hpp"
#include "support/corpus.hpp"
#include "synth/synth.hpp"

using namespace ppsched;
using namespace ppsched::test;

namespace {
SynthParams params_of(const nlohmann::json& c) {
  SynthParams p;
  p.ranks = c["ranks"];
  p.microbatches = c["microbatches"];
  p.stages_per_rank = c.value("stages_per_rank", 1u);
  return p;
}
}  // namespace

TEST_CASE("every corpus config is synthesized byte for byte") {
  std::size_t total = 0, same = 0;
  for (const auto& c : manifest()["configs"]) {
    std::string name = c["get_schedule_class_name"];
    SynthParams p = params_of(c);
    INFO(c["id"].get<std::string>());
    std::vector<std::pair<std::string, bool>> checks;  // file, pytorch_compat
    if (name == "1F1B") {
      checks = {{c["files"]["runtime_order_compute_only"], false}, {c["files"]["compute_only"], true}};
    } else {
      checks = {{c["files"]["compute_only"], false}};
    }
    for (auto& [file, compat] : checks) {
      ++total;
      p.pytorch_compat = compat;
      Schedule s = synthesize(name, p);
      std::string expected = read_file(corpus_dir() / "configs" / file);
      bool match = to_pytorch_csv(s) == expected;
      CHECK(match);
      same += match;
    }
  }
  std::cout << "conformance: " << same << "/" << total
            << " synthesized compute-only CSV files match PyTorch's byte for byte\n";
  CHECK(same == total);
}

TEST_CASE("every synthesized corpus config lowers to PyTorch's send_recv and compute_comms files") {
  std::size_t total = 0, same = 0;
  auto check = [&](const Schedule& s, const std::string& file) {
    ++total;
    bool match = to_pytorch_csv(s) == read_file(corpus_dir() / "configs" / file);
    INFO(file);
    CHECK(match);
    same += match;
  };
  for (const auto& c : manifest()["configs"]) {
    std::string name = c["get_schedule_class_name"];
    const auto& files = c["files"];
    Schedule s = synthesize(name, params_of(c));
    if (name == "1F1B") {
      check(lower_send_recv(s), files["runtime_order_send_recv"]);
    } else if (name == "GPipe") {
      // PyTorch's single-stage order already ends in REDUCE_GRAD: compute_comms keeps it,
      // send_recv was made from the order without it.
      check(lower_send_recv(s), files["compute_comms"]);
      check(lower_send_recv(strip_kind(s, ActionKind::ReduceGrad)), files["send_recv"]);
    } else {
      check(lower_send_recv(s), files["send_recv"]);
      check(lower_runtime(s), files["compute_comms"]);
    }
  }
  std::cout << "conformance: " << same << "/" << total
            << " synthesized-then-lowered CSV files match PyTorch's byte for byte\n";
  CHECK(same == total);
}

TEST_CASE("constructor rejections match PyTorch's") {
  std::size_t total = 0, same = 0;
  for (const auto& n : manifest()["negative"]) {
    if (n["mutation"] != "illegal_constructor_args") continue;
    ++total;
    std::string cls = n["schedule_class"];
    std::string name = cls.substr(std::string("Schedule").size());  // ScheduleDualPipeV -> DualPipeV
    SynthParams p = params_of(n);
    INFO(n["id"].get<std::string>());
    try {
      synthesize(name, p);
      FAIL("accepted");
    } catch (const SynthError& e) {
      CHECK(std::string(e.what()) == n["constructor"]["message"].get<std::string>());
      same += std::string(e.what()) == n["constructor"]["message"].get<std::string>();
    }
  }
  std::cout << "conformance: " << same << "/" << total
            << " illegal constructor arguments rejected with PyTorch's message\n";
  CHECK(total == 4);
  CHECK(same == total);
}
