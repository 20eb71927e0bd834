// tune's HTML face (tune_report.hpp): every candidate's iteration time against its peak memory.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "report/html_report.hpp"
#include "report/time_axis.hpp"
#include "report/tune_report.hpp"

namespace ppsched {

namespace {

std::string candidate_name(const TuneTrial& t) {
  return fmt::format("{} v={} m={} b={}", t.family, t.stages_per_rank, t.microbatches, t.microbatch_size);
}

}  // namespace

std::string tune_html(const TuneRequest& request, const TuneSources& sources, const TuneResult& result) {
  const std::string title = fmt::format("ppsched tune: {} ranks", request.ranks);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + html_escaped(title) +
                    "</title>\n<style>body{font-family:sans-serif;margin:24px;color:#222}h1{font-size:20px}"
                    ".note{font-size:12px;color:#555}</style></head>\n<body>\n<h1>" +
                    html_escaped(title) + "</h1>\n";
  if (!sources.time_model.empty())
    out += "<p class=\"note\">time model: " + html_escaped(sources.time_model) + "</p>\n";
  // The plot: x = peak memory, y = iteration time, a dot per candidate that ran; the cap as a
  // vertical line; the winner (the first trial, when it fits) ringed.
  double max_peak = request.memory_cap, max_time = 0;
  for (const TuneTrial& t : result.trials)
    if (t.ran && std::isfinite(t.peak) && std::isfinite(t.iteration_time)) {
      max_peak = std::max(max_peak, t.peak);
      max_time = std::max(max_time, t.iteration_time);
    }
  const double w = 900, h = 480, left = 80, top = 20, plot_w = w - left - 30, plot_h = h - top - 60;
  max_peak = std::max(max_peak * 1.05, 1e-300);
  max_time = std::max(max_time * 1.05, 1e-300);
  auto x = [&](double v) { return left + plot_w * v / max_peak; };
  auto y = [&](double v) { return top + plot_h * (1 - v / max_time); };
  out += fmt::format(
      "<section id=\"candidates\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:g}\" "
      "height=\"{:g}\">\n<rect x=\"{:g}\" y=\"{:g}\" width=\"{:g}\" height=\"{:g}\" fill=\"#f7f7f7\"/>\n",
      w, h, left, top, plot_w, plot_h);
  if (request.memory_cap > 0)
    out += fmt::format(
        "<line id=\"cap\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:g}\" y2=\"{2:g}\" stroke=\"#c00\" "
        "stroke-dasharray=\"6 4\"/><text x=\"{3:.1f}\" y=\"{4:g}\" fill=\"#c00\" font-size=\"12\">cap {5}"
        "</text>\n",
        x(request.memory_cap), top, top + plot_h, x(request.memory_cap) + 4, top + 14,
        html_escaped(format_tune_memory(request.memory_cap, sources.memory_in_bytes)));
  for (std::size_t i = 0; i < result.trials.size(); ++i) {
    const TuneTrial& t = result.trials[i];
    if (!t.ran || !std::isfinite(t.peak) || !std::isfinite(t.iteration_time)) continue;
    const bool winner = i == 0 && result.found();
    out += fmt::format(
        "<circle class=\"{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"{}><title>{}: time {:g}, "
        "peak {}{}</title></circle>\n",
        winner ? "candidate winner" : "candidate", x(t.peak), y(t.iteration_time), winner ? 7 : 4,
        t.fits ? "#0072b2" : "#999999", winner ? " stroke=\"#d55e00\" stroke-width=\"3\"" : "",
        html_escaped(candidate_name(t)), t.iteration_time,
        html_escaped(format_tune_memory(t.peak, sources.memory_in_bytes)), t.fits ? "" : ", over the cap");
  }
  out += fmt::format("<text x=\"{:g}\" y=\"{:g}\" font-size=\"12\">peak memory per rank ({}), 0 to {}</text>\n", left,
                     top + plot_h + 30, sources.memory_in_bytes ? "bytes" : "microbatches",
                     html_escaped(format_tune_memory(max_peak, sources.memory_in_bytes)));
  out += fmt::format(
      "<text x=\"{:g}\" y=\"{:g}\" font-size=\"12\" transform=\"rotate(-90 {:g} {:g})\">iteration "
      "time{}, 0 to {}</text>\n",
      left - 20, top + plot_h, left - 20, top + plot_h, sources.times_in_us ? " (us)" : "", short_time_text(max_time));
  out +=
      "</svg>\n<p class=\"note\">blue: fits under the cap; grey: over it; ringed: the pick. Hover a dot for its "
      "candidate.</p></section>\n";
  out += result.found() ? "<p id=\"winner\">best: " + html_escaped(candidate_name(result.trials.front())) + "</p>\n"
                        : std::string("<p id=\"winner\">no candidate fits under the cap</p>\n");
  out += "<script>document.body.dataset.ready = '1';</script>\n</body></html>\n";
  return out;
}

}  // namespace ppsched
