// The HTML report (html_report.hpp).
#include "report/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "diag/units.hpp"
#include "report/svg_gantt.hpp"
#include "report/time_axis.hpp"
#include "sim/runtime.hpp"

namespace ppsched {

std::string html_escaped(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

constexpr std::string_view kStyle = R"(body{font-family:sans-serif;margin:24px;color:#222}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;font-size:13px}td,th{padding:3px 10px;text-align:right;border-bottom:1px solid #ddd}
th:first-child,td:first-child{text-align:left}
#zoom{overflow-x:auto;border:1px solid #ddd}#zoom svg{display:block}
.controls button{margin-right:6px}.note{font-size:12px;color:#555})";

// Zooms the timeline by widening its SVG inside the scrolling box; the SVG keeps its viewBox, so
// boxes and labels scale together. Then marks the page ready.
constexpr std::string_view kScript = R"(
(function () {
  var box = document.getElementById('zoom');
  var svg = box.querySelector('svg');
  var base = svg.width.baseVal.value, height = svg.height.baseVal.value, zoom = 1;
  function set(z) {
    zoom = Math.min(64, Math.max(1, z));
    svg.setAttribute('width', base * zoom);
    svg.setAttribute('height', height * zoom);
    box.dataset.zoom = zoom;
  }
  document.getElementById('zoom-in').onclick = function () { set(zoom * 2); };
  document.getElementById('zoom-out').onclick = function () { set(zoom / 2); };
  document.getElementById('zoom-fit').onclick = function () { set(1); };
  var asked = /zoom=(\d+)/.exec(location.hash);  // a link can open the page zoomed: report.html#zoom=4
  if (asked) set(Number(asked[1]));
  box.addEventListener('wheel', function (e) {
    if (!e.ctrlKey) return;
    e.preventDefault();
    set(zoom * (e.deltaY < 0 ? 1.25 : 0.8));
  }, {passive: false});
  document.body.dataset.ready = '1';
})();
)";

std::string amount(double v, bool in_bytes) { return in_bytes ? human_bytes(v) : fmt::format("{:g}", v); }

void summary_section(const HtmlReportInput& in, std::string& out) {
  const SimAnalysis& a = in.analysis;
  const std::string unit = in.time_unit.empty() ? std::string() : " " + in.time_unit;
  out += "<section id=\"summary\"><h2>Summary</h2><table>\n";
  auto row = [&](std::string_view what, const std::string& value) {
    out += fmt::format("<tr><td>{}</td><td>{}</td></tr>\n", what, html_escaped(value));
  };
  row("iteration time", fmt::format("{:g}{}", iteration_time(a, in.options.optimizer), unit));
  row("makespan", fmt::format("{:g}{}", a.makespan, unit));
  row("bubble (global)", fmt::format("{:.2f}%", 100 * a.bubble_global));
  row("bubble (per stage)", fmt::format("{:.2f}%", 100 * a.bubble_per_stage));
  if (!a.memory.peak.empty())
    row("peak memory",
        memory_amount(a.memory.max_peak(), a.memory.in_bytes) +
            (in.options.memory_cap > 0 ? " (cap " + memory_amount(in.options.memory_cap, a.memory.in_bytes) + ")"
                                       : std::string()));
  out += "</table>\n";
  if (!in.options.time_model.empty())
    out += "<p class=\"note\">time model: " + html_escaped(in.options.time_model) + "</p>\n";
  out += "</section>\n";
}

void timeline_section(const HtmlReportInput& in, std::string& out) {
  out +=
      "<section id=\"timeline\"><h2>Timeline</h2>\n<p class=\"controls\"><button id=\"zoom-in\">zoom in</button>"
      "<button id=\"zoom-out\">zoom out</button><button id=\"zoom-fit\">fit</button>"
      "<span class=\"note\">Ctrl + wheel zooms too; hover a box for its action and times</span></p>\n"
      "<div id=\"zoom\" data-zoom=\"1\">\n";
  SvgOptions svg;
  svg.time_unit = in.time_unit;
  svg.idle_causes = true;
  svg.transfers = true;
  StringSink sink(out);
  write_svg_gantt(in.schedule, in.timeline, sink, svg);
  out += "</div></section>\n";
}

// A rank's step function with at most kMaxMemoryPoints points: per slice of time, where it starts
// and its highest value, so that every peak stays.
std::vector<MemoryPoint> thinned(const std::vector<MemoryPoint>& points, double makespan) {
  if (points.size() <= kMaxMemoryPoints || makespan <= 0) return points;
  const std::size_t slices = kMaxMemoryPoints / 2;
  std::vector<MemoryPoint> out;
  std::size_t i = 0;
  for (std::size_t k = 0; k < slices && i < points.size(); ++k) {
    const double end = makespan * static_cast<double>(k + 1) / static_cast<double>(slices);
    MemoryPoint first = points[i], high = points[i];
    for (; i < points.size() && (points[i].time < end || k + 1 == slices); ++i)
      if (points[i].value > high.value) high = points[i];
    out.push_back(first);
    if (high.time != first.time) out.push_back(high);
  }
  return out;
}

void memory_section(const HtmlReportInput& in, std::string& out) {
  const MemoryProfile& m = in.analysis.memory;
  out += "<section id=\"memory\"><h2>Memory over time</h2>\n";
  if (m.per_rank.empty()) {
    out += "<p class=\"note\">no memory timeline</p></section>\n";
    return;
  }
  const double w = 1000, h = 260, left = 70, top = 10, plot_w = w - left - 20, plot_h = h - top - 40;
  const double makespan = std::max(in.analysis.makespan, 1e-300);
  const double top_value = std::max({m.max_peak(), in.options.memory_cap, 1e-300});
  auto x = [&](double t) { return left + plot_w * t / makespan; };
  auto y = [&](double v) { return top + plot_h * (1 - v / top_value); };
  out += fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:g}\" height=\"{:g}\">\n", w, h);
  out += fmt::format("<rect x=\"{:g}\" y=\"{:g}\" width=\"{:g}\" height=\"{:g}\" fill=\"#f7f7f7\"/>\n", left, top,
                     plot_w, plot_h);
  for (std::size_t r = 0; r < m.per_rank.size(); ++r) {
    const std::vector<MemoryPoint> points = thinned(m.per_rank[r], makespan);
    std::string path;
    double last = 0;
    for (const MemoryPoint& p : points) {
      if (!std::isfinite(p.time) || !std::isfinite(p.value)) continue;
      path += fmt::format("{}{:.1f},{:.1f} {:.1f},{:.1f}", path.empty() ? "" : " ", x(p.time), y(last), x(p.time),
                          y(p.value));
      last = p.value;
    }
    path += fmt::format(" {:.1f},{:.1f}", x(makespan), y(last));
    // Okabe-Ito hues in turn, so neighbouring ranks differ.
    static constexpr std::string_view kHue[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9"};
    out += fmt::format(
        "<polyline class=\"rank\" data-rank=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.2\" "
        "points=\"{}\"><title>rank {}: peak {}</title></polyline>\n",
        r, kHue[r % std::size(kHue)], path, r, amount(m.peak[r], m.in_bytes));
  }
  if (in.options.memory_cap > 0)
    out += fmt::format(
        "<line id=\"cap\" x1=\"{:g}\" x2=\"{:g}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#c00\" "
        "stroke-dasharray=\"6 4\"/><text x=\"{:g}\" y=\"{:.1f}\" fill=\"#c00\" font-size=\"12\">cap {}"
        "</text>\n",
        left, left + plot_w, y(in.options.memory_cap), y(in.options.memory_cap), left + 4, y(in.options.memory_cap) - 4,
        html_escaped(amount(in.options.memory_cap, m.in_bytes)));
  out += fmt::format("<text x=\"{:g}\" y=\"{:g}\" font-size=\"12\" text-anchor=\"end\">{}</text>\n", left - 6, top + 10,
                     html_escaped(amount(top_value, m.in_bytes)));
  out += fmt::format("<text x=\"{:g}\" y=\"{:g}\" font-size=\"12\" text-anchor=\"end\">0</text>\n", left - 6,
                     top + plot_h);
  out += fmt::format(
      "<text x=\"{:g}\" y=\"{:g}\" font-size=\"12\">time{} from 0 to {}; {} per rank, a line each "
      "(hover one for its rank and peak)</text>\n",
      left, top + plot_h + 24, in.time_unit.empty() ? "" : " (" + html_escaped(in.time_unit) + ")",
      short_time_text(in.analysis.makespan), m.in_bytes ? "bytes" : "microbatches of activation");
  out += "</svg></section>\n";
}

void bubbles_section(const HtmlReportInput& in, std::string& out) {
  out +=
      "<section id=\"bubbles\"><h2>Idle time by cause</h2>\n<table><tr><th>rank</th><th>busy</th><th>warm-up</th>"
      "<th>cool-down</th><th>dependency</th><th>transfer</th><th>shared GPU</th></tr>\n";
  RankUsage total;
  auto row = [&](const std::string& name, const RankUsage& u) {
    out += fmt::format(
        "<tr><td>{}</td><td>{:g}</td><td>{:g}</td><td>{:g}</td><td>{:g}</td><td>{:g}</td><td>{:g}</td>"
        "</tr>\n",
        name, u.busy, u.warmup, u.cooldown, u.dependency_wait, u.comm_wait, u.device_wait);
  };
  for (std::size_t r = 0; r < in.analysis.ranks.size(); ++r) {
    const RankUsage& u = in.analysis.ranks[r];
    row(std::to_string(r), u);
    total.busy += u.busy;
    total.warmup += u.warmup;
    total.cooldown += u.cooldown;
    total.dependency_wait += u.dependency_wait;
    total.comm_wait += u.comm_wait;
    total.device_wait += u.device_wait;
  }
  row("all", total);
  out += "</table></section>\n";
}

}  // namespace

void write_html_report(const HtmlReportInput& in, ByteSink& sink) {
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + html_escaped(in.title) +
         "</title>\n<style>" + std::string(kStyle) + "</style></head>\n<body>\n<h1>" + html_escaped(in.title) +
         "</h1>\n";
  summary_section(in, out);
  timeline_section(in, out);
  memory_section(in, out);
  bubbles_section(in, out);
  out += "<script>" + std::string(kScript) + "</script>\n</body></html>\n";
  sink.write(out);
}

}  // namespace ppsched
