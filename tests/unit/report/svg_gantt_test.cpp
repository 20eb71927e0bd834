#include "report/svg_gantt.hpp"
#include "report/time_axis.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/built_timeline.hpp"
#include "support/catch.hpp"

using namespace ppsched;

namespace {

using Built = test::BuiltTimeline;

Action act(ActionKind k, std::uint16_t stage, std::uint32_t mb = Action::kNoMicrobatch) {
  return Action::make(k, stage, mb);
}

// A 1F1B-shaped run: F costs f, B costs 2f, and with comms each F/B is surrounded by its
// RECV and SEND on their own streams. Each rank's streams run back to back.
Built synthetic(std::uint32_t ranks, std::uint32_t mbs, bool comms, double f = 1) {
  Built b(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r) {
    const auto st = static_cast<std::uint16_t>(r);
    double now = r * f;
    auto fwd = [&](std::uint32_t m) {
      if (comms && r > 0) b.run(r, act(ActionKind::RecvF, st, m), now - f / 4, now, Stream::Recv);
      b.run(r, act(ActionKind::F, st, m), now, now + f);
      now += f;
      if (comms && r + 1 < ranks) b.run(r, act(ActionKind::SendF, st, m), now, now + f / 4, Stream::Send);
    };
    auto bwd = [&](std::uint32_t m) {
      if (comms && r + 1 < ranks) b.run(r, act(ActionKind::RecvB, st, m), now - f / 4, now, Stream::Recv);
      b.run(r, act(ActionKind::B, st, m), now, now + 2 * f);
      now += 2 * f;
      if (comms && r > 0) b.run(r, act(ActionKind::SendB, st, m), now, now + f / 4, Stream::Send);
    };
    const std::uint32_t warmup = std::min(ranks - 1 - r, mbs);
    std::uint32_t fw = 0, bw = 0;
    now += f / 4;
    while (fw < warmup) fwd(fw++);
    while (fw < mbs) {
      fwd(fw++);
      bwd(bw++);
    }
    while (bw < mbs) bwd(bw++);
  }
  return b;
}

std::string svg(const Schedule& s, const Timeline& t, const SvgOptions& opt = {}) {
  std::string text;
  StringSink sink(text);
  write_svg_gantt(s, t, sink, opt);
  return text;
}

/// What a small structural XML check found: the first error ("" when well-formed), the root
/// element and how many elements of each name there are.
struct XmlShape {
  std::string error;
  std::string root;
  std::map<std::string, std::size_t> count;
};

// Well-formedness as far as this writer can get it wrong: tags balance and nest, attributes
// are quoted, '<' never appears raw in text or attribute values, '&' only starts an entity,
// one root element, nothing but space after it.
XmlShape check_xml(std::string_view x) {
  XmlShape shape;
  std::vector<std::string> open;
  auto fail = [&](const std::string& what, std::size_t at) {
    shape.error = what + " at byte " + std::to_string(at);
    return shape;
  };
  auto entity_ok = [&](std::size_t amp) {
    const std::size_t semi = x.find(';', amp);
    if (semi == std::string_view::npos || semi - amp > 8) return false;
    const std::string_view name = x.substr(amp + 1, semi - amp - 1);
    if (name == "amp" || name == "lt" || name == "gt" || name == "quot" || name == "apos") return true;
    return name.size() > 1 && name[0] == '#' &&
           std::all_of(name.begin() + 1, name.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  bool root_closed = false;
  std::size_t i = 0;
  if (x.substr(0, 5) == "<?xml") i = x.find("?>") + 2;
  while (i < x.size()) {
    if (x[i] != '<') {
      if (x[i] == '&' && !entity_ok(i)) return fail("bad entity", i);
      if (open.empty() && !std::isspace(static_cast<unsigned char>(x[i]))) return fail("text outside the root", i);
      ++i;
      continue;
    }
    if (x.substr(i, 4) == "<!--") {
      const std::size_t end = x.find("-->", i);
      if (end == std::string_view::npos) return fail("unclosed comment", i);
      i = end + 3;
      continue;
    }
    if (x.substr(i, 9) == "<![CDATA[") {
      const std::size_t end = x.find("]]>", i);
      if (end == std::string_view::npos || open.empty()) return fail("bad CDATA", i);
      i = end + 3;
      continue;
    }
    const bool closing = x.substr(i, 2) == "</";
    std::size_t j = i + (closing ? 2 : 1);
    const std::size_t name_begin = j;
    while (j < x.size() && (std::isalnum(static_cast<unsigned char>(x[j])) || x[j] == ':' || x[j] == '-')) ++j;
    const std::string name(x.substr(name_begin, j - name_begin));
    if (name.empty()) return fail("tag without a name", i);
    if (closing) {
      if (open.empty() || open.back() != name) return fail("unbalanced </" + name + ">", i);
      open.pop_back();
      if (open.empty()) root_closed = true;
      if (j >= x.size() || x[j] != '>') return fail("bad closing tag", i);
      i = j + 1;
      continue;
    }
    if (root_closed || (open.empty() && !shape.root.empty())) return fail("a second root element", i);
    // Attributes: name="value" or name='value'.
    bool self_closing = false;
    while (true) {
      while (j < x.size() && std::isspace(static_cast<unsigned char>(x[j]))) ++j;
      if (j >= x.size()) return fail("unterminated tag", i);
      if (x[j] == '>') break;
      if (x.substr(j, 2) == "/>") {
        self_closing = true;
        ++j;
        break;
      }
      const std::size_t attr = j;
      while (j < x.size() && (std::isalnum(static_cast<unsigned char>(x[j])) || x[j] == '-' || x[j] == ':')) ++j;
      if (j == attr || j + 1 >= x.size() || x[j] != '=' || (x[j + 1] != '"' && x[j + 1] != '\''))
        return fail("bad attribute in <" + name + ">", j);
      const char quote = x[j + 1];
      const std::size_t value_end = x.find(quote, j + 2);
      if (value_end == std::string_view::npos) return fail("unterminated attribute", j);
      for (std::size_t k = j + 2; k < value_end; ++k) {
        if (x[k] == '<') return fail("'<' in an attribute", k);
        if (x[k] == '&' && !entity_ok(k)) return fail("bad entity in an attribute", k);
      }
      j = value_end + 1;
    }
    if (shape.root.empty()) shape.root = name;
    ++shape.count[name];
    if (!self_closing)
      open.push_back(name);
    else if (open.empty())
      root_closed = true;
    i = j + 1;
  }
  if (!open.empty()) return fail("unclosed <" + open.back() + ">", x.size());
  if (shape.root.empty()) return fail("no root element", 0);
  return shape;
}

// xmllint's verdict when it is installed; an empty optional otherwise.
std::optional<bool> xmllint_accepts(const std::string& text) {
  if (std::system("command -v xmllint >/dev/null 2>&1") != 0) return std::nullopt;
  const auto path =
      std::filesystem::temp_directory_path() / ("ppsched_svg_test_" + std::to_string(::getpid()) + ".svg");
  std::ofstream(path, std::ios::binary) << text;
  const int rc = std::system(("xmllint --noout '" + path.string() + "'").c_str());
  std::filesystem::remove(path);
  return rc == 0;
}

// Every coordinate attribute is a plain finite decimal number ("12", "-0.5"), never "nan" or
// "inf"; returns the first offending attribute, or "".
std::string bad_number(const std::string& text) {
  static const std::regex attr(R"re( (x|y|x1|x2|y1|y2|width|height)="([^"]*)")re");
  static const std::regex decimal(R"re(-?[0-9]+(\.[0-9]+)?)re");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), attr); it != std::sregex_iterator(); ++it) {
    const std::string value = (*it)[2].str();
    if (value == "100%") continue;
    if (!std::regex_match(value, decimal)) return it->str();
  }
  return "";
}

void check_well_formed(const std::string& text) {
  CHECK(bad_number(text) == "");
  const XmlShape shape = check_xml(text);
  INFO(shape.error);
  CHECK(shape.error.empty());
  CHECK(shape.root == "svg");
  CHECK(text.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
                   "version=\"1.1\"",
                   0) == 0);
  if (const auto ok = xmllint_accepts(text))
    CHECK(*ok);
  else
    WARN("xmllint is not installed: structural check only");
}

std::size_t count(const std::string& text, std::string_view what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("svg gantt: the structural XML check catches what it should") {
  CHECK(check_xml("<svg><g/><text>a &amp; b</text></svg>").error.empty());
  CHECK(check_xml("<svg><g></svg>").error != "");
  CHECK(check_xml("<svg><text>a & b</text></svg>").error != "");
  CHECK(check_xml("<svg><text x=\"<\">a</text></svg>").error != "");
  CHECK(check_xml("<svg/><svg/>").error != "");
  CHECK(check_xml("<svg><rect x=1/></svg>").error != "");
}

TEST_CASE("svg gantt: 8 ranks: rows, lanes, labels, tooltips, legend, well-formed") {
  Built b = synthetic(8, 8, true);
  const Timeline t = b.build();
  SvgOptions opt;
  opt.time_unit = "us";
  const std::string text = svg(b.s, t, opt);
  check_well_formed(text);
  for (int r = 0; r < 8; ++r) CHECK(text.find(">rank " + std::to_string(r) + "</text>") != std::string::npos);
  // Every action is its own box at this size, with a tooltip; compute boxes hold their text.
  CHECK(count(text, "<rect class=\"k") == t.size() + 7);  // + 7 legend swatches
  CHECK(count(text, "<title>") == t.size());
  CHECK(text.find("<title>3F2 (rank 3): ") != std::string::npos);
  CHECK(text.find(">3F2</text>") != std::string::npos);
  CHECK(text.find(">3SEND_F2</text>") == std::string::npos);  // thin lanes hold no text
  CHECK(count(text, "class=\"kC\"") > 0);
  for (std::string_view legend : {"F forward", "B backward", "I input grad", "W weight grad", "OVERLAP_F_B",
                                  "SEND/RECV", "UNSHARD/RESHARD/REDUCE_GRAD"})
    CHECK(text.find(std::string(">") + std::string(legend) + "</text>") != std::string::npos);
  CHECK(text.find(">time (us)</text>") != std::string::npos);
  CHECK(text.find("width=\"1200\"") != std::string::npos);

  SvgOptions plain;
  plain.comm_lanes = false;
  plain.tooltips = false;
  plain.labels = false;
  const std::string bare = svg(b.s, t, plain);
  check_well_formed(bare);
  CHECK(count(bare, "class=\"kC\"") == 1);  // the legend's swatch only
  CHECK(count(bare, "<title>") == 0);
  CHECK(count(bare, "class=\"l\"") == 0);
}

TEST_CASE("svg gantt: 256 ranks: thin rows, no box labels, every other rank named") {
  Built b = synthetic(256, 4, false);
  const std::string text = svg(b.s, b.build());
  check_well_formed(text);
  CHECK(count(text, "<text class=\"l\"") == 0);
  CHECK(count(text, "\">rank ") == 128);
  CHECK(text.find(">rank 254</text>") != std::string::npos);
  // Height stays near max_chart_height (heading, axis and its caption, legend and its note).
  const auto h = text.find("height=\"");
  CHECK(std::stod(text.substr(h + 8)) < 1600 + 160);
}

TEST_CASE("svg gantt: 100k actions stay a bounded file") {
  Built b = synthetic(256, 66, true);  // about 100k actions with comms
  const Timeline t = b.build();
  REQUIRE(t.size() > 100000);
  SvgOptions opt;
  const std::string text = svg(b.s, t, opt);
  check_well_formed(text);
  const std::size_t boxes = count(text, "<rect class=\"k") - 7;
  CHECK(boxes <= 2 * opt.max_boxes);
  CHECK(text.size() < 6'000'000);
  CHECK(count(text, " actions, ") > 0);  // merged boxes say how many actions they hold
}

TEST_CASE("svg gantt: narrow boxes of one rank merge, wide ones stay single") {
  Built b(1);
  for (std::uint32_t m = 0; m < 10000; ++m) b.run(0, act(ActionKind::F, 0, m), m * 0.001, (m + 1) * 0.001);
  b.run(0, act(ActionKind::B, 0, 0), 10, 20);
  const std::string text = svg(b.s, b.build());
  check_well_formed(text);
  // The first half of the chart holds 10000 tiny forwards: about one box per pixel.
  const std::size_t boxes = count(text, "<rect class=\"k") - 7;
  CHECK(boxes < 700);
  CHECK(boxes > 400);
  CHECK(count(text, "class=\"kF m\"") == boxes - 1);
  CHECK(text.find(">0B0</text>") != std::string::npos);
}

TEST_CASE("svg gantt: text is escaped, odd timelines still draw") {
  Built b(2);
  b.run(0, act(ActionKind::Unshard, 0), 0, 0)
      .run(0, act(ActionKind::F, 0, 0), 0, 1)
      .run(1, act(ActionKind::W, 1, 0), 1, 2)
      .run(1, act(ActionKind::I, 1, 0), 2, std::numeric_limits<double>::quiet_NaN());
  SvgOptions opt;
  opt.title = "<a & 'b'> \"c\"";
  const std::string text = svg(b.s, b.build(), opt);
  check_well_formed(text);
  CHECK(text.find(">&lt;a &amp; &apos;b&apos;&gt; &quot;c&quot;</text>") != std::string::npos);
  CHECK(bad_number(text) == "");
  CHECK(bad_number(R"(<rect x="nan" y="1"/>)") == R"( x="nan")");
  CHECK(text.find("class=\"kS m\"") != std::string::npos);  // the zero-length UNSHARD, as a hairline

  Built empty(0);
  check_well_formed(svg(empty.s, empty.build()));
  Built idle(3);
  check_well_formed(svg(idle.s, idle.build()));

  Built other(3);
  CHECK_THROWS_AS(svg(other.s, b.build()), std::invalid_argument);
  opt.width = 0;
  CHECK_THROWS_AS(svg(b.s, b.build(), opt), std::invalid_argument);
}

TEST_CASE("svg gantt: a merged box of several kinds is striped by their shares of its time") {
  // 3000 tiny actions alternating F (1 unit), I (1) and W (2): every merged box holds all three,
  // and its stripes are 25%, 25% and 50% of the row's height.
  Built b(1);
  double now = 0;
  for (std::uint32_t m = 0; m < 1000; ++m) {
    b.run(0, act(ActionKind::F, 0, m), now, now + 0.001);
    b.run(0, act(ActionKind::I, 0, m), now + 0.001, now + 0.002);
    b.run(0, act(ActionKind::W, 0, m), now + 0.002, now + 0.004);
    now += 0.004;
  }
  const std::string text = svg(b.s, b.build());
  check_well_formed(text);
  CHECK(count(text, "<g><title>") > 100);
  const std::regex stripe(
      "<rect class=\"k([FIW]) m\" x=\"[0-9.]+\" y=\"[0-9.]+\" width=\"[0-9.]+\" height=\"([0-9.]+)\"/>");
  std::map<std::string, double> height;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), stripe); it != std::sregex_iterator(); ++it)
    height[(*it)[1]] = std::max(height[(*it)[1]], std::stod((*it)[2]));
  REQUIRE(height.size() == 3);
  CHECK(height["W"] == Approx(2 * height["F"]).epsilon(0.05));
  CHECK(height["I"] == Approx(height["F"]).epsilon(0.05));
  // The tooltip gives the shares.
  CHECK(text.find("F forward 25%; I input grad 25%; W weight grad 50%") != std::string::npos);
}

TEST_CASE("svg gantt: a rank's second chunk is drawn lighter, and labels shrink before they go") {
  // V placement on 2 ranks: rank 0 holds stages 0 and 3, rank 1 stages 1 and 2.
  Built b(2);
  b.s.num_stages = 4;
  b.s.placement = Placement::for_shape(PlacementStyle::V, 2, 2);
  b.run(0, act(ActionKind::F, 0, 0), 0, 1).run(0, act(ActionKind::F, 3, 0), 3, 4);
  b.run(1, act(ActionKind::F, 1, 0), 1, 2).run(1, act(ActionKind::F, 2, 0), 2, 3);
  SvgOptions narrow;
  narrow.width = 300;  // boxes of about 60 px: labels at a smaller size
  const std::string text = svg(b.s, b.build(), narrow);
  check_well_formed(text);
  CHECK(count(text, "class=\"kF c1\"") == 2);  // 3F0 and 2F0
  CHECK(text.find(".c1{fill-opacity:0.5}") != std::string::npos);
  CHECK(count(text, "<text class=\"l\"") == 4);
  SvgOptions tiny;
  tiny.width = 120;  // about 16 px a box: "0F0" would need 6 px glyphs or less
  CHECK(count(svg(b.s, b.build(), tiny), "<text class=\"l\"") == 0);
}

TEST_CASE("time labels: four significant digits, and a k, M or G suffix instead of an exponent") {
  CHECK(short_time_text(0) == "0");
  CHECK(short_time_text(115.5) == "115.5");
  CHECK(short_time_text(0.25) == "0.25");
  CHECK(short_time_text(9999) == "9999");
  CHECK(short_time_text(418900) == "418.9k");  // the issue's axis read 4.189e+05
  CHECK(short_time_text(1.25e7) == "12.5M");
  CHECK(short_time_text(3e10) == "30G");
}

TEST_CASE("svg gantt: idle stretches tinted by cause, and transfer arrows that go forward in time") {
  // test::small_pipeline: rank 1 waits for 1RECV_F0 (a transfer) before 1F0, rank 0 waits for
  // 0RECV_B0 before 0B0; rank 0 starts at once (no warm-up) and rank 1 idles at the end.
  Built b = test::small_pipeline();
  Timeline t = b.build();
  t.released_by[t.rank_begin[1] + 1] = t.rank_begin[1];  // 1F0 released by 1RECV_F0
  t.released_by[3] = 2;                                  // 0B0 released by 0RECV_B0
  SvgOptions opt;
  opt.idle_causes = true;
  opt.transfers = true;
  const std::string text = svg(b.s, t, opt);
  check_well_formed(text);
  CHECK(text.find("rank 1: idle: warm-up or cool-down from 0 to 1.5") != std::string::npos);
  CHECK(text.find("rank 0: idle: transfer from 1 to 4") != std::string::npos);
  CHECK(text.find("rank 1: idle: warm-up or cool-down from 3.5 to 6") != std::string::npos);
  const std::regex arrow("<line class=\"xfer\" x1=\"([0-9.]+)\" y1=\"[0-9.]+\" x2=\"([0-9.]+)\"");
  std::size_t arrows = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), arrow); it != std::sregex_iterator(); ++it) {
    ++arrows;
    CHECK(std::stod((*it)[1]) <= std::stod((*it)[2]));
  }
  CHECK(arrows == 2);
  // Off by default: the plain chart has neither.
  const std::string plain = svg(b.s, t);
  CHECK(plain.find("class=\"xfer\"") == std::string::npos);
  CHECK(plain.find("<g class=\"idle\">") == std::string::npos);
}
