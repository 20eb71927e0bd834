#include "report/pipeline_grid.hpp"

#include "parse/pytorch_csv.hpp"
#include "support/catch.hpp"

using namespace ppsched;

namespace {
Schedule read(std::string_view csv) {
  DiagnosticSink sink;
  auto p = read_pytorch_csv_text("s.csv", csv, {}, sink);
  REQUIRE(p);
  return std::move(p->schedule);
}
}  // namespace

TEST_CASE("the grid has a row per step and a column per rank, PyTorch's widths") {
  // Column 0 is as wide as "Step 0" (6), column 1 as its widest action (8); the header's
  // "Rank i" labels do not widen a column, and rows keep their trailing spaces.
  Schedule s = read("0F0,0B0\n,1F0,1SEND_B0\n");
  CHECK(format_pipeline_grid(s) ==
        "        Rank 0 Rank 1  \n"
        "Step 0: 0F0            \n"
        "Step 1: 0B0    1F0     \n"
        "Step 2:        1SEND_B0\n");
}

TEST_CASE("the error step is marked, and step labels are zero-padded") {
  std::string row;
  for (int i = 0; i < 11; ++i) row += (i ? "," : "") + std::string("0F") + std::to_string(i);
  std::string grid = format_pipeline_grid(read(row), 3);
  CHECK(grid.find("Step 03: 0F3     <-- ERROR HERE\n") != std::string::npos);
  CHECK(grid.find("Step 10: 0F10   \n") != std::string::npos);
}

TEST_CASE("no steps gives an empty grid instead of PyTorch's IndexError") {
  CHECK(format_pipeline_grid(read("\n\n")).empty());
}

TEST_CASE("more ranks than steps still prints every column") {
  CHECK(format_pipeline_grid(read("0F0\n1F0\n2F0\n")) ==
        "        Rank 0 Rank 1 Rank 2\n"
        "Step 0: 0F0    1F0    2F0   \n");
}
