// The step grid (`compile --format text`) equals PyTorch's `_format_pipeline_order` output,
// which the manifest stores for small configs.
#include <iostream>

#include "parse/pytorch_csv.hpp"
#include "report/pipeline_grid.hpp"
#include "support/catch.hpp"
#include "support/corpus.hpp"

using namespace ppsched;
using namespace ppsched::test;

TEST_CASE("step grid matches PyTorch's _format_pipeline_order") {
  std::size_t total = 0, same = 0;
  for (const auto& c : manifest()["configs"]) {
    const auto& co = c["compute_only"];
    if (!co.contains("format_pipeline_order")) continue;
    ++total;
    auto path = corpus_dir() / "configs" / c["files"]["compute_only"].get<std::string>();
    DiagnosticSink sink;
    auto parsed = read_pytorch_csv(path.string(), {}, sink);
    REQUIRE(parsed);
    INFO(c["id"].get<std::string>());
    std::string grid = format_pipeline_grid(parsed->schedule);
    CHECK(grid == co["format_pipeline_order"].get<std::string>());
    same += grid == co["format_pipeline_order"].get<std::string>();
  }
  std::cout << "conformance: " << same << "/" << total << " step grids match PyTorch's\n";
  CHECK(total > 20);
  CHECK(same == total);
}
