#include "report/svg_gantt.hpp"
#include "report/time_axis.hpp"
#include "report/timeline_shape.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "ir/action_text.hpp"
#include "report/chunked_out.hpp"

namespace ppsched {
namespace {

// Colour classes: index, CSS class, fill, legend text.
enum Colour : int { kF, kB, kI, kW, kO, kComm, kFsdp, kColours };
constexpr std::array<std::string_view, kColours> kClass = {"kF", "kB", "kI", "kW", "kO", "kC", "kS"};
// Okabe and Ito's colour-blind-safe palette: blue, vermillion, orange, bluish green, reddish
// purple, grey, yellow. The second chunk of a rank (its second stage, a V's way back) is the
// same hue lighter (class c1).
constexpr std::array<std::string_view, kColours> kFill = {"#0072b2", "#d55e00", "#e69f00", "#009e73",
                                                          "#cc79a7", "#999999", "#f0e442"};
constexpr std::array<std::string_view, kColours> kLegend = {"F forward",
                                                            "B backward",
                                                            "I input grad",
                                                            "W weight grad",
                                                            "OVERLAP_F_B",
                                                            "SEND/RECV",
                                                            "UNSHARD/RESHARD/REDUCE_GRAD"};

int colour_of(ActionKind k) {
  switch (k) {
    case ActionKind::F:
      return kF;
    case ActionKind::B:
      return kB;
    case ActionKind::I:
      return kI;
    case ActionKind::W:
      return kW;
    case ActionKind::OverlapFB:
      return kO;
    case ActionKind::Unshard:
    case ActionKind::Reshard:
    case ActionKind::ReduceGrad:
      return kFsdp;
    case ActionKind::Idle:
      return -1;
    default:
      return kComm;
  }
}

/// Buffered writer of SVG text into the sink.
class SvgOut : public ChunkedOut {
 public:
  using ChunkedOut::ChunkedOut;
  /// A coordinate: at most 2 decimals, trailing zeros dropped ("12", "6.25", "0.5").
  void num(double v) {
    if (!std::isfinite(v)) v = 0;  // never reached with checked input; keeps the XML valid
    char tmp[48];
    auto* end = fmt::format_to_n(tmp, sizeof tmp, "{:.2f}", v).out;
    while (end[-1] == '0') --end;
    if (end[-1] == '.') --end;
    if (end - tmp == 2 && tmp[0] == '-' && tmp[1] == '0') {  // "-0"
      tmp[0] = '0';
      end = tmp + 1;
    }
    raw(std::string_view(tmp, static_cast<std::size_t>(end - tmp)));
  }
  void text(std::string_view s) {
    for (char c : s) {
      switch (c) {
        case '&':
          raw("&amp;");
          break;
        case '<':
          raw("&lt;");
          break;
        case '>':
          raw("&gt;");
          break;
        case '"':
          raw("&quot;");
          break;
        case '\'':
          raw("&apos;");
          break;
        default:
          // XML 1.0 allows no control characters other than tab, newline and carriage return.
          if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r')
            ch(' ');
          else
            ch(c);
      }
    }
  }
};

struct Lane {
  double y, h;
};

/// Draws one lane (one stream of one rank): single boxes where they are wide enough, merged
/// runs of narrow ones otherwise (see the header for why that bounds the size).
class LanePainter {
 public:
  LanePainter(SvgOut& out, const Schedule& s, const Timeline& t, const SvgOptions& opt, double x0, double px_per_unit,
              double min_px, double label_font)
      : out_(out),
        s_(s),
        t_(t),
        opt_(opt),
        x0_(x0),
        px_per_unit_(px_per_unit),
        min_px_(min_px),
        label_font_(label_font) {}

  void paint(std::uint32_t rank, Lane lane, const std::vector<std::uint32_t>& entries, bool labels) {
    rank_ = rank;
    lane_ = lane;
    labels_ = labels;
    for (std::uint32_t e : entries) {
      const Action& a = s_.ranks[rank].actions[t_.step[e]];
      const int colour = colour_of(a.kind);
      if (colour < 0) continue;
      const double x1 = x0_ + t_.start[e] * px_per_unit_, x2 = x0_ + t_.end[e] * px_per_unit_;
      if (run_.count && x1 - run_.x2 >= min_px_) flush_run();
      if (x2 - x1 >= min_px_) {
        flush_run();
        box(e, a, colour, x1, x2);
      } else {
        if (!run_.count) {
          run_.x1 = x1;
          run_.x2 = x2;
          run_.first = e;
        }
        run_.x2 = std::max(run_.x2, x2);
        run_.time[static_cast<std::size_t>(colour)] += t_.end[e] - t_.start[e];
        run_.last = e;
        ++run_.count;
        if (run_.x2 - run_.x1 >= min_px_) flush_run();
      }
      out_.maybe_flush();
    }
    flush_run();
  }

 private:
  struct Run {
    double x1 = 0, x2 = 0;
    std::array<double, kColours> time{};
    std::uint32_t first = 0, last = 0, count = 0;
  };

  const Action& action(std::uint32_t e) const { return s_.ranks[rank_].actions[t_.step[e]]; }

  void rect_open(int colour, bool merged, double x1, double w, bool second_chunk = false) {
    out_.raw("<rect class=\"");
    out_.raw(kClass[static_cast<std::size_t>(colour)]);
    if (second_chunk) out_.raw(" c1");
    if (merged) out_.raw(" m");
    out_.raw("\" x=\"");
    out_.num(x1);
    out_.raw("\" y=\"");
    out_.num(lane_.y);
    out_.raw("\" width=\"");
    out_.num(w);
    out_.raw("\" height=\"");
    out_.num(lane_.h);
    out_.raw("\"");
  }

  void box(std::uint32_t e, const Action& a, int colour, double x1, double x2) {
    text_.clear();
    append_action_text(text_, a, s_.sub_actions);
    rect_open(colour, false, x1, x2 - x1, later_chunk(a));
    if (opt_.tooltips) {
      out_.raw("><title>");
      out_.text(text_);
      out_.fmt(" (rank {}): {} to {}</title></rect>\n", rank_, short_time_text(t_.start[e]),
               short_time_text(t_.end[e]));
    } else {
      out_.raw("/>\n");
    }
    // Monospace glyphs are about 0.6 em wide; keep a little air on both sides. A label that does
    // not fit at the row's size is set smaller, down to 6 px, before it is left out.
    const double fits = (x2 - x1 - 3) / (0.62 * static_cast<double>(text_.size()));
    if (labels_ && fits >= 6) {
      out_.raw("<text class=\"l\" x=\"");
      out_.num((x1 + x2) / 2);
      out_.raw("\" y=\"");
      out_.num(lane_.y + lane_.h / 2);
      if (fits < label_font_) {  // inline style: a presentation attribute loses to the class's
        out_.raw("\" style=\"font-size:");
        out_.num(fits);
        out_.raw("px");
      }
      out_.raw("\">");
      out_.text(text_);
      out_.raw("</text>\n");
    }
  }

  void flush_run() {
    if (!run_.count) return;
    int colour = 0;
    for (int k = 1; k < kColours; ++k)
      if (run_.time[static_cast<std::size_t>(k)] > run_.time[static_cast<std::size_t>(colour)]) colour = k;
    if (run_.count == 1) {  // a lone narrow action keeps its own tooltip
      const std::uint32_t e = run_.first;
      colour = colour_of(action(e).kind);
    }
    // Zero-length actions would vanish; half a pixel keeps them visible as a hairline.
    const double w = std::max(run_.x2 - run_.x1, 0.5);
    double busy = 0;
    int kinds = 0;
    for (double x : run_.time) {
      busy += x;
      kinds += x > 0;
    }
    if (run_.count > 1 && kinds > 1) {
      // Several kinds in one box: stripes, each kind's height its share of the box's time, so
      // the mix is seen and not hidden under the commonest kind.
      out_.raw("<g>");
      if (opt_.tooltips) {
        out_.raw("<title>");
        run_tooltip();
        out_.raw("</title>");
      }
      double y = lane_.y;
      for (int k = 0; k < kColours; ++k) {
        const double share = run_.time[static_cast<std::size_t>(k)] / busy;
        if (share <= 0) continue;
        const double h = lane_.h * share;
        out_.raw("<rect class=\"");
        out_.raw(kClass[static_cast<std::size_t>(k)]);
        out_.raw(" m\" x=\"");
        out_.num(run_.x1);
        out_.raw("\" y=\"");
        out_.num(y);
        out_.raw("\" width=\"");
        out_.num(w);
        out_.raw("\" height=\"");
        out_.num(h);
        out_.raw("\"/>");
        y += h;
      }
      out_.raw("</g>\n");
      run_ = Run{};
      return;
    }
    rect_open(colour, true, run_.x1, w, run_.count == 1 && later_chunk(action(run_.first)));
    if (opt_.tooltips) {
      out_.raw("><title>");
      run_tooltip();
      out_.raw("</title></rect>\n");
    } else {
      out_.raw("/>\n");
    }
    run_ = Run{};
  }

  // A run's tooltip: the one action, or the count, the first and last, the span and each
  // kind's share of the time.
  void run_tooltip() {
    text_.clear();
    append_action_text(text_, action(run_.first), s_.sub_actions);
    if (run_.count == 1) {
      out_.text(text_);
      out_.fmt(" (rank {}): {} to {}", rank_, short_time_text(t_.start[run_.first]),
               short_time_text(t_.end[run_.first]));
      return;
    }
    out_.fmt("rank {}: {} actions, ", rank_, run_.count);
    out_.text(text_);
    out_.raw(" .. ");
    text_.clear();
    append_action_text(text_, action(run_.last), s_.sub_actions);
    out_.text(text_);
    out_.fmt(": {} to {}", short_time_text(t_.start[run_.first]), short_time_text(t_.end[run_.last]));
    double busy = 0;
    for (double x : run_.time) busy += x;
    if (busy <= 0) return;
    for (int k = 0; k < kColours; ++k)
      if (const double x = run_.time[static_cast<std::size_t>(k)]; x > 0)
        out_.fmt("; {} {:.0f}%", kLegend[static_cast<std::size_t>(k)], 100 * x / busy);
  }

  // Whether `a` runs a rank's second (or later) stage: a later chunk, drawn lighter.
  bool later_chunk(const Action& a) const {
    if (!a.has_stage()) return false;
    const auto& stages = rank_stages_;
    if (rank_ >= stages.size()) return false;
    const auto& mine = stages[rank_];
    return mine.size() > 1 && a.stage != mine.front();
  }

 public:
  std::vector<std::vector<std::uint32_t>> rank_stages_;  ///< each rank's stages, ascending

 private:
  SvgOut& out_;
  const Schedule& s_;
  const Timeline& t_;
  const SvgOptions& opt_;
  double x0_, px_per_unit_, min_px_, label_font_;
  std::uint32_t rank_ = 0;
  Lane lane_{};
  bool labels_ = false;
  Run run_;
  std::string text_;
};

void check_options(const SvgOptions& opt) {
  if (!std::isfinite(opt.width) || opt.width <= 0 || !std::isfinite(opt.row_height) || opt.row_height < 0 ||
      !std::isfinite(opt.max_chart_height) || opt.max_chart_height <= 0 || opt.max_boxes == 0)
    throw std::invalid_argument("svg gantt: width, row height, chart height and max boxes must be positive");
}

/// Where everything goes, in px, computed before the first byte is written.
struct Layout {
  std::size_t ranks = 0;
  double makespan = 0;
  double width = 0, height = 0;
  double left = 0, right = 16, top = 32;
  double chart_w = 0, chart_h = 0, axis_y = 0;
  double pitch = 0;    ///< px per rank
  bool lanes = false;  ///< send and recv lanes under each compute row
  double label_font = 0;
  double chunk_note_y = 0;  ///< the legend's line on chunks
  bool labels = false;
  double px_per_unit = 0;
  double min_px = 0;  ///< boxes narrower than this merge
  struct Item {
    double x, y;
    int colour;
  };
  std::vector<Item> legend;

  std::uint32_t rank_begin(const Timeline& t, std::size_t r) const {
    return t.rank_begin.empty() ? 0 : t.rank_begin[r];
  }

  Lane lane_of(std::size_t r, int stream) const {
    const double y0 = top + pitch * static_cast<double>(r);
    if (lanes) {
      if (stream == 0) return {y0 + 0.08 * pitch, 0.56 * pitch};
      return {y0 + (stream == 1 ? 0.68 : 0.82) * pitch, 0.12 * pitch};
    }
    if (pitch < 4) return {y0, pitch};
    return {y0 + 0.1 * pitch, 0.8 * pitch};
  }
};

Layout layout(const Schedule& s, const Timeline& t, const SvgOptions& opt) {
  Layout g;
  g.ranks = s.rank_count();
  // The makespan (stated, else the latest finite end) and whether any entry is a transfer.
  // Entries with times that cannot be drawn (NaN, infinite, reversed) are left out later.
  const bool stated_makespan = std::isfinite(t.makespan) && t.makespan > 0;
  g.makespan = stated_makespan ? t.makespan : 0;
  bool has_comm_streams = false;
  for (std::size_t r = 0; r < g.ranks; ++r) {
    const std::size_t steps = s.ranks[r].actions.size();
    for (std::uint32_t e = g.rank_begin(t, r); e < g.rank_begin(t, r + 1); ++e) {
      if (t.step[e] >= steps || static_cast<unsigned>(t.stream[e]) >= kStreamCount)
        throw std::logic_error(
            fmt::format("svg gantt: timeline entry {} of rank {} names step {} (of {}) or "
                        "stream {}",
                        e, r, t.step[e], steps, static_cast<unsigned>(t.stream[e])));
      if (t.stream[e] != Stream::Compute) has_comm_streams = true;
      if (!stated_makespan && std::isfinite(t.end[e])) g.makespan = std::max(g.makespan, t.end[e]);
    }
  }

  // Geometry.
  const std::size_t digits = std::to_string(g.ranks == 0 ? 0 : g.ranks - 1).size();
  g.left = std::max(60.0, 20.0 + 7.0 * static_cast<double>(5 + digits));
  g.width = std::max(opt.width, g.left + g.right + 50);
  g.chart_w = g.width - g.left - g.right;
  g.pitch = opt.row_height > 0 ? opt.row_height : std::min(28.0, opt.max_chart_height / std::max<double>(1, g.ranks));
  g.lanes = opt.comm_lanes.value_or(has_comm_streams && g.pitch >= 14);
  g.chart_h = g.pitch * static_cast<double>(g.ranks);
  const double compute_h = g.lane_of(0, 0).h;
  g.label_font = std::min(12.0, compute_h * 0.75);
  g.labels = opt.labels && compute_h >= 10;
  g.px_per_unit = g.makespan > 0 ? g.chart_w / g.makespan : 0;
  const double drawn_lanes = static_cast<double>(g.ranks) * (g.lanes ? 3 : 1);
  g.min_px = std::max(1.0, g.chart_w * drawn_lanes / static_cast<double>(opt.max_boxes));

  // Legend layout (wrapped to the width), then the total height.
  g.axis_y = g.top + g.chart_h;
  double lx = g.left, ly = g.axis_y + 58;
  for (int k = 0; k < kColours; ++k) {
    const double w = 12 + 6 + 7 * static_cast<double>(kLegend[static_cast<std::size_t>(k)].size()) + 18;
    if (lx + w > g.width && lx > g.left) {
      lx = g.left;
      ly += 20;
    }
    g.legend.push_back({lx, ly, k});
    lx += w;
  }
  g.chunk_note_y = ly + 20;
  g.height = ly + 40 + (opt.idle_causes ? 20 : 0);
  return g;
}

/// The XML declaration, the <svg> element and its style sheet, and the white background.
void write_header(SvgOut& out, const Layout& g) {
  out.raw(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
      "width=\"");
  out.num(g.width);
  out.raw("\" height=\"");
  out.num(g.height);
  out.raw("\" viewBox=\"0 0 ");
  out.num(g.width);
  out.raw(" ");
  out.num(g.height);
  out.raw("\">\n<style type=\"text/css\"><![CDATA[\n");
  out.raw("text{font-family:sans-serif;font-size:12px;fill:#222}\n");
  out.raw(".h{font-size:14px;font-weight:bold}\n.r{text-anchor:end;dominant-baseline:central}\n");
  out.raw(".t{text-anchor:middle}\n.a{stroke:#999;stroke-width:1}\n.grid{stroke:#e4e4e4;stroke-width:1}\n");
  out.fmt(".l{{font-family:monospace;font-size:{:.1f}px;text-anchor:middle;dominant-baseline:central}}\n",
          g.label_font);
  if (g.pitch >= 10) out.raw(".g rect{stroke:#fff;stroke-width:0.5}\n.g rect.m{stroke:none}\n");
  for (int k = 0; k < kColours; ++k)
    out.fmt(".{}{{fill:{}}}\n", kClass[static_cast<std::size_t>(k)], kFill[static_cast<std::size_t>(k)]);
  out.raw(".c1{fill-opacity:0.5}\n.xfer{stroke:#555;stroke-width:0.8;opacity:0.6}\n");
  out.raw("]]></style>\n");
  out.raw("<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n");
}

/// The heading: the caller's title, else ranks, actions and makespan.
void write_title(SvgOut& out, const Layout& g, std::size_t actions, const SvgOptions& opt) {
  out.raw("<text class=\"h\" x=\"");
  out.num(g.left);
  out.raw("\" y=\"20\">");
  if (opt.title.empty()) {
    out.fmt("ppsched: {} ranks, {} actions, makespan {}", g.ranks, actions, short_time_text(g.makespan));
    if (!opt.time_unit.empty()) {
      out.raw(" ");
      out.text(opt.time_unit);
    }
  } else {
    out.text(opt.title);
  }
  out.raw("</text>\n");
}

/// The chart's background, the time grid with its tick labels, and the axis line and caption.
void write_axis(SvgOut& out, const Layout& g, const SvgOptions& opt) {
  out.raw("<rect x=\"");
  out.num(g.left);
  out.fmt("\" y=\"{}\" width=\"", g.top);
  out.num(g.chart_w);
  out.raw("\" height=\"");
  out.num(g.chart_h);
  out.raw("\" fill=\"#f7f7f7\"/>\n");
  if (g.makespan > 0) {
    double step = nice_axis_step(g.makespan / std::max(2.0, std::floor(g.chart_w / 100)));
    while (step * g.px_per_unit < 8 * static_cast<double>(short_time_text(g.makespan).size() + 2))
      step = nice_axis_step(step * 1.5);
    for (int k = 0;; ++k) {
      const double when = step * k;
      if (when > g.makespan * (1 + 1e-9)) break;
      const double x = g.left + when * g.px_per_unit;
      out.raw("<line class=\"grid\" x1=\"");
      out.num(x);
      out.fmt("\" y1=\"{}\" x2=\"", g.top);
      out.num(x);
      out.raw("\" y2=\"");
      out.num(g.axis_y + 5);
      out.raw("\"/>\n<text class=\"t\" x=\"");
      out.num(x);
      out.raw("\" y=\"");
      out.num(g.axis_y + 19);
      out.fmt("\">{}</text>\n", short_time_text(when));
    }
  }
  out.raw("<line class=\"a\" x1=\"");
  out.num(g.left);
  out.raw("\" y1=\"");
  out.num(g.axis_y);
  out.raw("\" x2=\"");
  out.num(g.left + g.chart_w);
  out.raw("\" y2=\"");
  out.num(g.axis_y);
  // The caption under the tick labels, from the axis's start: left of the axis it was cut off.
  out.raw("\"/>\n<text x=\"");
  out.num(g.left);
  out.raw("\" y=\"");
  out.num(g.axis_y + 36);
  out.raw("\">time");
  if (!opt.time_unit.empty()) {
    out.raw(" (");
    out.text(opt.time_unit);
    out.raw(")");
  }
  out.raw("</text>\n");
}

/// Rank labels: every rank while rows are tall enough for the text, else every 2nd, 4th, ...
void write_rank_labels(SvgOut& out, const Layout& g) {
  std::size_t every = 1;
  while (g.pitch * static_cast<double>(every) < 11) every *= 2;
  const double rank_font = std::min(12.0, std::max(9.0, g.pitch * 0.8));
  for (std::size_t r = 0; r < g.ranks; r += every) {
    out.raw("<text class=\"r\" x=\"");
    out.num(g.left - 6);
    out.raw("\" y=\"");
    out.num(g.top + g.pitch * (static_cast<double>(r) + 0.5));
    if (rank_font < 12) {
      out.raw("\" font-size=\"");
      out.num(rank_font);
    }
    out.fmt("\">rank {}</text>\n", r);
    out.maybe_flush();
  }
}

/// The boxes: per rank, each drawn stream's entries in time order, painted lane by lane.
void write_lanes(SvgOut& out, const Layout& g, const Schedule& s, const Timeline& t, const SvgOptions& opt) {
  out.raw("<g class=\"g\">\n");
  LanePainter painter(out, s, t, opt, g.left, g.px_per_unit, g.min_px, g.label_font);
  if (s.placement.num_stages() > 0)
    painter.rank_stages_ = s.placement.rank_to_stages(static_cast<std::uint32_t>(g.ranks));
  std::array<std::vector<std::uint32_t>, kStreamCount> lane_entries;
  for (std::size_t r = 0; r < g.ranks; ++r) {
    for (auto& l : lane_entries) l.clear();
    for (std::uint32_t e = g.rank_begin(t, r); e < g.rank_begin(t, r + 1); ++e) {
      if (!std::isfinite(t.start[e]) || !std::isfinite(t.end[e]) || t.end[e] < t.start[e]) continue;
      lane_entries[static_cast<std::size_t>(t.stream[e])].push_back(e);
    }
    for (int st = 0; st < (g.lanes ? kStreamCount : 1); ++st) {
      auto& l = lane_entries[static_cast<std::size_t>(st)];
      auto by_start = [&](std::uint32_t a, std::uint32_t b) { return t.start[a] < t.start[b]; };
      if (!std::is_sorted(l.begin(), l.end(), by_start)) std::stable_sort(l.begin(), l.end(), by_start);
      painter.paint(static_cast<std::uint32_t>(r), g.lane_of(r, st), l, g.labels && st == 0);
    }
  }
  out.raw("</g>\n");
}

// Idle causes: fill, legend text. A gap is put down to what released the action after it, as
// sim/timed_rules.hpp's split does (there a transfer's own time is split off a gap a compute
// action of another rank released; here the whole gap takes one colour).
constexpr std::array<std::pair<std::string_view, std::string_view>, 5> kIdle = {{
    {"#ececec", "idle: warm-up or cool-down"},
    {"#fbd8bd", "idle: dependency"},
    {"#c9e3f6", "idle: transfer"},
    {"#e5cce4", "idle: shared GPU"},
    {"#ffffff", ""},
}};

bool is_comm(ActionKind k) {
  return k == ActionKind::SendF || k == ActionKind::SendB || k == ActionKind::RecvF || k == ActionKind::RecvB;
}

/// Tints each idle stretch of every compute row by its cause (SvgOptions::idle_causes).
void write_idle_causes(SvgOut& out, const Layout& g, const Schedule& s, const Timeline& t) {
  out.raw("<g class=\"idle\">\n");
  auto tint = [&](std::size_t r, double from, double to, int cause) {
    if (to <= from) return;
    const Lane lane = g.lane_of(r, 0);
    out.fmt("<rect fill=\"{}\" x=\"", kIdle[static_cast<std::size_t>(cause)].first);
    out.num(g.left + from * g.px_per_unit);
    out.raw("\" y=\"");
    out.num(lane.y);
    out.raw("\" width=\"");
    out.num((to - from) * g.px_per_unit);
    out.raw("\" height=\"");
    out.num(lane.h);
    out.fmt("\"><title>rank {}: {} from {} to {}</title></rect>\n", r, kIdle[static_cast<std::size_t>(cause)].second,
            short_time_text(from), short_time_text(to));
  };
  for (std::size_t r = 0; r < g.ranks; ++r) {
    double end = 0;
    bool any = false;
    for (std::uint32_t e = g.rank_begin(t, r); e < g.rank_begin(t, r + 1); ++e) {
      if (t.stream[e] != Stream::Compute || !(t.end[e] > t.start[e])) continue;
      const double start = t.start[e];
      if (!any) {
        tint(r, 0, start, 0);
      } else if (start > end) {
        int cause = 1;
        if (const std::uint32_t by = t.released_by[e]; by != Timeline::kNone) {
          const std::uint32_t br = t.rank_of(by);
          if (!t.device_turn.empty() && t.device_turn[e])
            cause = 3;
          else if (is_comm(s.ranks[br].actions[t.step[by]].kind) || br != r)
            cause = 2;
        }
        tint(r, end, start, cause);
      }
      end = std::max(end, t.end[e]);
      any = true;
    }
    tint(r, any ? end : 0, g.makespan, 0);
    out.maybe_flush();
  }
  out.raw("</g>\n");
}

/// An arrow from each SEND to the end of its RECV (SvgOptions::transfers).
void write_transfers(SvgOut& out, const Layout& g, const Schedule& s, const Timeline& t, const SvgOptions& opt) {
  std::size_t arrows = 0;
  for (std::uint32_t e = 0; e < t.size(); ++e) arrows += t.peer[e] != Timeline::kNone && t.stream[e] == Stream::Recv;
  if (arrows == 0 || arrows > opt.max_arrows) return;
  out.raw(
      "<defs><marker id=\"head\" markerWidth=\"6\" markerHeight=\"6\" refX=\"5\" refY=\"3\" orient=\"auto\">"
      "<path d=\"M0,0 L6,3 L0,6 z\" fill=\"#555\"/></marker></defs>\n<g class=\"transfers\">\n");
  for (std::uint32_t e = 0; e < t.size(); ++e) {
    const std::uint32_t p = t.peer[e];
    if (p == Timeline::kNone || t.stream[e] != Stream::Recv) continue;
    const std::size_t from = t.rank_of(p), to = t.rank_of(e);
    const Lane a = g.lane_of(from, 0), b = g.lane_of(to, 0);
    // From where the transfer starts (both ends posted) to where it ends: never back in time.
    const double x1 = g.left + std::max(t.start[p], t.start[e]) * g.px_per_unit;
    const double x2 = g.left + t.end[e] * g.px_per_unit;
    out.raw("<line class=\"xfer\" x1=\"");
    out.num(x1);
    out.raw("\" y1=\"");
    out.num(a.y + a.h / 2);
    out.raw("\" x2=\"");
    out.num(std::max(x1, x2));
    out.raw("\" y2=\"");
    out.num(b.y + b.h / 2);
    out.raw("\" marker-end=\"url(#head)\"/>\n");
    (void)s;
    out.maybe_flush();
  }
  out.raw("</g>\n");
}

/// The idle causes' swatches, on a line under the legend's note.
void write_idle_legend(SvgOut& out, const Layout& g) {
  double x = g.left;
  for (std::size_t k = 0; k + 1 < kIdle.size(); ++k) {
    out.fmt("<rect fill=\"{}\" stroke=\"#bbb\" x=\"", kIdle[k].first);
    out.num(x);
    out.raw("\" y=\"");
    out.num(g.chunk_note_y + 14);
    out.raw("\" width=\"12\" height=\"12\"/>\n<text class=\"r\" style=\"text-anchor:start\" x=\"");
    out.num(x + 18);
    out.raw("\" y=\"");
    out.num(g.chunk_note_y + 20);
    out.raw("\">");
    out.text(kIdle[k].second);
    out.raw("</text>\n");
    x += 18 + 7.0 * static_cast<double>(kIdle[k].second.size()) + 24;
  }
}

/// A swatch and its caption per colour, where layout() placed them.
void write_legend(SvgOut& out, const Layout& g) {
  for (const Layout::Item& item : g.legend) {
    out.raw("<rect class=\"");
    out.raw(kClass[static_cast<std::size_t>(item.colour)]);
    out.raw("\" x=\"");
    out.num(item.x);
    out.raw("\" y=\"");
    out.num(item.y - 6);
    out.raw("\" width=\"12\" height=\"12\"/>\n<text class=\"r\" style=\"text-anchor:start\" x=\"");
    out.num(item.x + 18);
    out.raw("\" y=\"");
    out.num(item.y);
    out.raw("\">");
    out.text(kLegend[static_cast<std::size_t>(item.colour)]);
    out.raw("</text>\n");
  }
  out.raw("<text class=\"r\" style=\"text-anchor:start\" x=\"");
  out.num(g.left);
  out.raw("\" y=\"");
  out.num(g.chunk_note_y);
  out.raw(
      "\">lighter: a rank's second chunk (its later stage); striped: a box too narrow to draw alone, "
      "each kind's height its share of the time</text>\n");
}

}  // namespace

void write_svg_gantt(const Schedule& s, const Timeline& t, ByteSink& sink, const SvgOptions& opt) {
  check_options(opt);
  check_timeline_shape(s, t, "svg gantt");
  const Layout g = layout(s, t, opt);

  SvgOut out(sink);
  write_header(out, g);
  write_title(out, g, t.size(), opt);
  write_axis(out, g, opt);
  write_rank_labels(out, g);
  if (opt.idle_causes) write_idle_causes(out, g, s, t);
  write_lanes(out, g, s, t, opt);
  if (opt.transfers) write_transfers(out, g, s, t, opt);
  write_legend(out, g);
  if (opt.idle_causes) write_idle_legend(out, g);
  out.raw("</svg>\n");
  out.flush();
}

}  // namespace ppsched
