// The second conformance corpus (tests/conformance/pytorch-cff2ecc8, PyTorch at cff2ecc8): every
// config of the first corpus again, and for the runtime classes each of PyTorch's lowering
// keywords (defer_pp_recv, max_active_stages 1, 2, 0 and None, and defer_pp_recv with
// max_active_stages=1). lower_runtime with the same keywords must write PyTorch's compute_comms
// byte for byte, and fail where PyTorch's constructor failed, with its error.
//
// Files a keyword leaves unchanged are not stored twice: the manifest names the first corpus's.
#include <filesystem>
#include <iostream>

#include "parse/pytorch_csv.hpp"
#include "passes/passes.hpp"
#include "support/catch.hpp"
#include "support/corpus.hpp"

using namespace ppsched;
using namespace ppsched::test;

namespace {

Schedule load(const std::string& name) {
  DiagnosticSink sink;
  auto parsed = read_pytorch_csv(cff2ecc8_file(name).string(), {}, sink);
  INFO(name);
  REQUIRE(parsed);
  return std::move(parsed->schedule);
}

RuntimeLowering keywords(const nlohmann::json& config) {
  RuntimeLowering k;
  const auto& kw = config.value("constructor_kwargs", nlohmann::json::object());
  if (kw.contains("defer_pp_recv")) k.defer_pp_recv = kw["defer_pp_recv"].get<bool>();
  if (kw.contains("max_active_stages")) {
    if (kw["max_active_stages"].is_null())
      k.max_active_stages = std::nullopt;
    else
      k.max_active_stages = kw["max_active_stages"].get<std::int64_t>();
  }
  return k;
}

bool runtime_class(const nlohmann::json& config) {
  const std::string c = config["schedule_class"];
  return c != "ScheduleGPipe" && c != "Schedule1F1B";
}

}  // namespace

TEST_CASE("the cff2ecc8 corpus: lowering with PyTorch's keywords reproduces every compute_comms file") {
  std::size_t total = 0, same = 0, keyworded = 0;
  for (const auto& config : cff2ecc8_manifest()["configs"]) {
    const auto& files = config["files"];
    if (!runtime_class(config) || !files.contains("compute_comms")) continue;
    const std::string id = config["id"];
    INFO(id);
    Schedule compute = load(files["compute_only"]);
    compute.num_stages = config["num_stages"].get<std::uint32_t>();
    compute.num_microbatches = config["microbatches"].get<std::uint32_t>();
    const std::string expected = read_file(cff2ecc8_file(files["compute_comms"]));
    std::string got;
    try {
      got = to_pytorch_csv(lower_runtime(compute, keywords(config)));
    } catch (const PassError& e) {
      got = std::string("error: ") + e.what();
    }
    CHECK(got == expected);
    ++total;
    same += got == expected;
    keyworded += !config.value("constructor_kwargs", nlohmann::json::object()).empty();
  }
  std::cout << "conformance (PyTorch cff2ecc8): " << same << "/" << total
            << " compute_comms files of the runtime classes match byte for byte, " << keyworded
            << " of them lowered with keywords\n";
  CHECK(total >= 450);
  CHECK(same == total);
}

TEST_CASE("the cff2ecc8 corpus: max_active_stages=None fails where PyTorch's constructor failed, with its error") {
  std::size_t refused = 0;
  for (const auto& config : cff2ecc8_manifest()["configs"]) {
    const auto& ctor = config["constructor"];
    if (ctor.value("ok", true) || !runtime_class(config)) continue;
    const std::string id = config["id"];
    INFO(id);
    // The keyword's default-config order: what PyTorch's constructor was lowering when it failed.
    const auto& base = *std::find_if(cff2ecc8_manifest()["configs"].begin(), cff2ecc8_manifest()["configs"].end(),
                                     [&](const nlohmann::json& c) { return c["id"] == config["variant_of"]; });
    Schedule compute = load(base["files"]["compute_only"]);
    compute.num_stages = config["num_stages"].get<std::uint32_t>();
    compute.num_microbatches = config["microbatches"].get<std::uint32_t>();
    const std::string message = ctor["message_first_line"];
    CHECK_THROWS_WITH(lower_runtime(compute, keywords(config)), Catch::Contains(message));
    ++refused;
  }
  std::cout << "conformance (PyTorch cff2ecc8): " << refused << " keyword refusals of the runtime classes agree\n";
  CHECK(refused == 8);
}
