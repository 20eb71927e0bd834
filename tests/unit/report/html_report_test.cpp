// simulate's HTML report: its sections, escaping, and memory lines that stay bounded without
// losing a peak. The browser test (tests/cli/html_report_test.sh) loads it in Chromium.
#include "report/html_report.hpp"

#include <algorithm>
#include <string>

#include "sim/memory.hpp"
#include "sim/timed.hpp"
#include "support/catch.hpp"
#include "synth/synth.hpp"

using namespace ppsched;

namespace {

std::string report(const Schedule& s, double cap, std::string title = "t") {
  TimedOptions opt;
  opt.costs = CostModel::uniform(s.num_stages, s.num_stages / static_cast<std::uint32_t>(s.rank_count()), unit_costs());
  const Timeline t = simulate_timed(s, s.placement.stage_to_rank, opt);
  const SimAnalysis a = analyze(s, t, MemoryModel{});
  std::string out;
  StringSink sink(out);
  write_html_report({s, t, a, SimReportOptions{cap, "time <model>", Optimizer::Sync}, std::move(title), "cost units"},
                    sink);
  return out;
}

}  // namespace

TEST_CASE("html report: one page with its four sections, nothing fetched, text escaped") {
  const std::string page = report(synthesize("ZBH1", {4, 8}), 3, "a <b> & c");
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  for (const char* id : {"summary", "timeline", "memory", "bubbles"})
    CHECK(page.find(std::string("<section id=\"") + id + "\">") != std::string::npos);
  CHECK(page.find("<h1>a &lt;b&gt; &amp; c</h1>") != std::string::npos);
  CHECK(page.find("time model: time &lt;model&gt;") != std::string::npos);
  CHECK(page.find("src=\"http") == std::string::npos);
  CHECK(page.find("href=\"http") == std::string::npos);
  CHECK(page.find("id=\"cap\"") != std::string::npos);                   // ZB-H1 holds 4 on rank 0: over the cap of 3
  CHECK(page.find("document.body.dataset.ready") != std::string::npos);  // what the browser test waits for
}

TEST_CASE("html report: a long run's memory lines keep at most their bound of points and every peak") {
  const Schedule s = synthesize("1F1B", {4, 4096});
  const std::string page = report(s, 0);
  // Plain string search: std::regex recurses per character and overflows the stack on lines this long.
  std::size_t lines = 0;
  for (std::size_t at = page.find("<polyline class=\"rank\" data-rank=\""); at != std::string::npos;
       at = page.find("<polyline class=\"rank\" data-rank=\"", at + 1)) {
    ++lines;
    const std::size_t rank_at = at + std::string("<polyline class=\"rank\" data-rank=\"").size();
    const std::string rank = page.substr(rank_at, page.find('"', rank_at) - rank_at);
    const std::size_t points_at = page.find("points=\"", at) + 8;
    const std::string points = page.substr(points_at, page.find('"', points_at) - points_at);
    const auto count = static_cast<std::size_t>(std::count(points.begin(), points.end(), ','));
    CHECK(count <= 2 * kMaxMemoryPoints + 2);  // a step is two points
    // 1F1B's rank 0 peaks at 4 microbatches: the highest point (smallest y) is the plot's top.
    double lowest_y = 1e9;
    for (std::size_t c = points.find(','); c != std::string::npos; c = points.find(',', c + 1))
      lowest_y = std::min(lowest_y, std::stod(points.substr(c + 1)));
    if (rank == "0") CHECK(lowest_y == Approx(10.0));  // top + plot height x (1 - peak / peak)
  }
  CHECK(lines == 4);
}
