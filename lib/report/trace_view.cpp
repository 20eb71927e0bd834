#include "report/trace_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/action_text.hpp"
#include "report/chunked_out.hpp"

namespace ppsched {
namespace {

// Times are written in whole nanoseconds; beyond this (about 104 days) llround overflows.
constexpr double kMaxNanoseconds = 9.0e15;

constexpr std::string_view kStreamNames[kStreamCount] = {"compute", "send", "recv"};

int tid_of(Stream s) { return static_cast<int>(s) + 1; }

std::string_view kind_class(ActionKind k) {
  if (is_compute(k)) return "compute";
  if (is_send_recv(k)) return "comm";
  return "fsdp";  // UNSHARD, RESHARD, REDUCE_GRAD
}

bool is_send(ActionKind k) { return k == ActionKind::SendF || k == ActionKind::SendB; }
bool is_recv(ActionKind k) { return k == ActionKind::RecvF || k == ActionKind::RecvB; }

/// A streaming JSON writer.
class JsonOut : public ChunkedOut {
 public:
  using ChunkedOut::ChunkedOut;

  void uint(std::uint64_t v) {
    fmt::format_int f(v);
    raw(std::string_view(f.data(), f.size()));
  }
  /// Nanoseconds as microseconds with exactly 3 decimals.
  void micros(std::int64_t ns) {
    if (ns < 0) {
      ch('-');
      ns = -ns;
    }
    const auto u = static_cast<std::uint64_t>(ns);
    uint(u / 1000);
    const auto frac = static_cast<unsigned>(u % 1000);
    const char digits[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                            static_cast<char>('0' + frac % 10)};
    raw(std::string_view(digits, 4));
  }
  /// A finite number (callers guard), shortest round-trip form.
  void number(double v) { fmt("{}", v); }
  void string(std::string_view s) {
    ch('"');
    for (char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        ch('\\');
        ch(c);
      } else if (u < 0x20) {
        switch (c) {
          case '\n':
            raw("\\n");
            break;
          case '\t':
            raw("\\t");
            break;
          case '\r':
            raw("\\r");
            break;
          default:
            fmt("\\u{:04x}", u);
        }
      } else {
        ch(c);
      }
    }
    ch('"');
  }
  /// Starts an event: the separator from the previous one.
  void begin_event() {
    if (!first_) raw(",\n");
    first_ = false;
  }
  void end_event() { maybe_flush(); }

 private:
  bool first_ = true;
};

/// Read-only context shared by the checks and the writer.
struct Ctx {
  const Schedule& s;
  const Timeline& t;
  double ns_per_unit;  // time_scale * 1000
  std::size_t ranks;

  std::uint32_t begin(std::size_t r) const { return t.rank_begin.empty() ? 0 : t.rank_begin[r]; }
  std::uint32_t end(std::size_t r) const { return t.rank_begin.empty() ? 0 : t.rank_begin[r + 1]; }
  /// Rank of an entry (rank_begin validated first).
  std::uint32_t rank_of(std::uint32_t e) const {
    auto it = std::upper_bound(t.rank_begin.begin(), t.rank_begin.end(), e);
    return static_cast<std::uint32_t>(it - t.rank_begin.begin() - 1);
  }
  const Action& action(std::uint32_t r, std::uint32_t e) const { return s.ranks[r].actions[t.step[e]]; }
  std::int64_t ns(double time) const { return std::llround(time * ns_per_unit); }

  std::string describe(std::uint32_t e) const {
    const std::uint32_t r = rank_of(e);
    std::string text = action_text(action(r, e), s.sub_actions);
    return fmt::format("entry {} (rank {} {}, {}, {} to {})", e, r, text, kStreamNames[static_cast<int>(t.stream[e])],
                       t.start[e], t.end[e]);
  }
};

[[noreturn]] void bug(const std::string& what) {
  throw std::logic_error("chrome trace: timeline is inconsistent: " + what);
}

// Everything that could make the output wrong is checked before the first byte is written,
// so a throw never leaves half a trace behind. Returns the streams each rank uses (bit mask).
std::vector<std::uint8_t> check_timeline(const Ctx& c) {
  const Timeline& t = c.t;
  const std::size_t n = t.size();
  if (t.end.size() != n || t.stream.size() != n || t.step.size() != n || t.released_by.size() != n ||
      t.peer.size() != n)
    bug("its arrays have different lengths");
  if (t.rank_begin.empty()) {
    if (n != 0) bug("entries but no rank_begin");
  } else {
    if (t.rank_count() != c.s.rank_count())
      throw std::invalid_argument(
          fmt::format("chrome trace: the timeline has {} ranks, the schedule {}", t.rank_count(), c.s.rank_count()));
    if (t.rank_begin.front() != 0 || t.rank_begin.back() != n ||
        !std::is_sorted(t.rank_begin.begin(), t.rank_begin.end()))
      bug("rank_begin is not a sorted offset array over the entries");
  }

  std::vector<std::uint8_t> used(c.ranks, 0);
  std::vector<std::uint32_t> lane[kStreamCount];
  for (std::size_t r = 0; r < c.ranks; ++r) {
    for (auto& l : lane) l.clear();
    const std::size_t steps = c.s.ranks[r].actions.size();
    for (std::uint32_t e = c.begin(r); e < c.end(r); ++e) {
      if (t.step[e] >= steps)
        bug(fmt::format("entry {} of rank {} names step {}, its program has {}", e, r, t.step[e], steps));
      const auto stream = static_cast<unsigned>(t.stream[e]);
      if (stream >= kStreamCount) bug(fmt::format("entry {} has stream {}", e, stream));
      const double a = t.start[e] * c.ns_per_unit, b = t.end[e] * c.ns_per_unit;
      if (!std::isfinite(a) || !std::isfinite(b) || std::abs(a) > kMaxNanoseconds || std::abs(b) > kMaxNanoseconds)
        bug(c.describe(e) + " has a time that is not finite or too large to write");
      if (t.end[e] < t.start[e]) bug(c.describe(e) + " ends before it starts");
      if (t.released_by[e] != Timeline::kNone && t.released_by[e] >= n)
        bug(fmt::format("entry {} is released by entry {}, there are {}", e, t.released_by[e], n));
      if (const std::uint32_t p = t.peer[e]; p != Timeline::kNone) {
        if (p >= n) bug(fmt::format("entry {} has peer {}, there are {}", e, p, n));
        const ActionKind k = c.action(static_cast<std::uint32_t>(r), e).kind;
        const ActionKind pk = c.action(c.rank_of(p), p).kind;
        if (!((is_send(k) && is_recv(pk)) || (is_recv(k) && is_send(pk))) || t.peer[p] != e)
          bug(c.describe(e) + " and its peer " + c.describe(p) + " are not a SEND/RECV pair");
      }
      if (c.action(static_cast<std::uint32_t>(r), e).is_idle()) continue;  // not written
      used[r] |= static_cast<std::uint8_t>(1u << stream);
      lane[stream].push_back(e);
    }
    // One stream runs one action at a time: sort its entries by written start (the simulator
    // emits them in program order, which is usually time order already) and look for an entry
    // that starts before an earlier one has ended.
    for (auto& l : lane) {
      auto key = [&](std::uint32_t e) { return std::pair(c.ns(t.start[e]), c.ns(t.end[e])); };
      if (!std::is_sorted(l.begin(), l.end(), [&](auto x, auto y) { return key(x) < key(y); }))
        std::stable_sort(l.begin(), l.end(), [&](auto x, auto y) { return key(x) < key(y); });
      std::int64_t reach = INT64_MIN;  // latest end so far
      std::uint32_t holder = Timeline::kNone;
      for (std::uint32_t e : l) {
        const auto [a, b] = key(e);
        if (a < reach && b > a) bug(c.describe(holder) + " and " + c.describe(e) + " overlap on one stream");
        if (b > reach) {
          reach = b;
          holder = e;
        }
      }
    }
  }
  return used;
}

std::string process_name(const Schedule& s, std::size_t r, std::vector<bool>& seen) {
  std::vector<std::uint32_t> stages;
  auto note = [&](const Action& a) {
    if (a.has_stage() && !seen[a.stage]) {
      seen[a.stage] = true;
      stages.push_back(a.stage);
    }
  };
  for (const Action& a : s.ranks[r].actions) {
    if (a.is_container())
      for (const Action& sub : s.subs(a)) note(sub);
    else
      note(a);
  }
  for (std::uint32_t st : stages) seen[st] = false;
  std::sort(stages.begin(), stages.end());
  std::string name = fmt::format("rank {}", r);
  if (stages.empty()) return name;
  constexpr std::size_t kListed = 8;
  name += stages.size() == 1 ? " (stage " : " (stages ";
  for (std::size_t i = 0; i < stages.size() && i < kListed; ++i) name += (i ? ", " : "") + std::to_string(stages[i]);
  if (stages.size() > kListed) name += fmt::format(", ... {} in all", stages.size());
  name += ')';
  return name;
}

void check_options(const TraceOptions& opt) {
  if (!std::isfinite(opt.time_scale) || opt.time_scale <= 0)
    throw std::invalid_argument(fmt::format("chrome trace: time scale {} is not a positive number", opt.time_scale));
  if (opt.display_time_unit != "ms" && opt.display_time_unit != "ns")
    throw std::invalid_argument("chrome trace: display time unit '" + opt.display_time_unit + "' is not 'ms' or 'ns'");
}

/// Writes the trace's sections in order: the header, then per rank its metadata, its slices
/// (with their flow events) and its memory counter, then the footer.
class TraceWriter {
 public:
  TraceWriter(JsonOut& out, const Ctx& c, const TraceOptions& opt) : out_(out), c_(c), opt_(opt) {}

  void header() { out_.raw("{\"traceEvents\":[\n"); }

  /// The process (rank) name and sort index, and a name and sort index for each stream it uses.
  void rank_metadata(std::size_t r, std::uint8_t used_streams) {
    const std::uint64_t pid = r + 1;
    out_.begin_event();
    out_.raw("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
    out_.uint(pid);
    out_.raw(",\"args\":{\"name\":");
    out_.string(process_name(c_.s, r, seen_));
    out_.raw("}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":");
    out_.uint(pid);
    out_.raw(",\"args\":{\"sort_index\":");
    out_.uint(r);
    out_.raw("}}");
    for (int st = 0; st < kStreamCount; ++st) {
      if (!(used_streams & (1u << st))) continue;
      for (std::string_view meta : {"thread_name", "thread_sort_index"}) {
        out_.raw(",\n{\"ph\":\"M\",\"name\":\"");
        out_.raw(meta);
        out_.raw("\",\"pid\":");
        out_.uint(pid);
        out_.raw(",\"tid\":");
        out_.uint(static_cast<std::uint64_t>(st) + 1);
        if (meta == "thread_name") {
          out_.raw(",\"args\":{\"name\":");
          out_.string(opt_.thread_prefix + std::string(kStreamNames[st]));
          out_.raw("}}");
        } else {
          out_.raw(",\"args\":{\"sort_index\":");
          out_.uint(static_cast<std::uint64_t>(st) + 1);
          out_.raw("}}");
        }
      }
    }
    out_.end_event();
  }

  /// Every action of rank `r` as a complete slice, each SEND and RECV with its end of an arrow.
  void rank_slices(std::size_t r) {
    for (std::uint32_t e = c_.begin(r); e < c_.end(r); ++e) {
      const Action& a = c_.action(static_cast<std::uint32_t>(r), e);
      if (a.is_idle()) continue;
      out_.begin_event();
      slice(r, e, a);
      out_.end_event();
    }
  }

  /// Rank `r`'s memory over time as a counter track, one point per change.
  void rank_memory(std::size_t r, const MemoryProfile& memory) {
    if (r >= memory.per_rank.size()) return;
    const std::uint64_t pid = r + 1;
    const auto& points = memory.per_rank[r];
    const std::string_view key = memory.in_bytes ? "weights_and_activations_MiB" : "activations_microbatches";
    const double unit = memory.in_bytes ? 1.0 / (1024.0 * 1024.0) : 1.0;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const double when = points[i].time * c_.ns_per_unit, value = points[i].value * unit;
      if (!std::isfinite(when) || std::abs(when) > kMaxNanoseconds || !std::isfinite(value)) continue;
      const std::int64_t ts = std::llround(when);
      // Several changes at one (written) time: the last one is what holds from then on.
      if (i + 1 < points.size() && std::isfinite(points[i + 1].value * unit)) {
        const double next = points[i + 1].time * c_.ns_per_unit;
        if (std::isfinite(next) && std::abs(next) <= kMaxNanoseconds && std::llround(next) == ts) continue;
      }
      out_.begin_event();
      out_.raw("{\"ph\":\"C\",\"name\":\"memory\",\"pid\":");
      out_.uint(pid);
      out_.raw(",\"ts\":");
      out_.micros(ts);
      out_.raw(",\"args\":{\"");
      out_.raw(key);
      out_.raw("\":");
      out_.number(value);
      out_.raw("}}");
      out_.end_event();
    }
  }

  /// The display unit and otherData (generator, label, scale, sizes, makespan).
  void footer() {
    out_.raw("\n],\"displayTimeUnit\":");
    out_.string(opt_.display_time_unit);
    out_.raw(",\"otherData\":{\"generator\":\"ppsched\"");
    if (!opt_.label.empty()) {
      out_.raw(",\"label\":");
      out_.string(opt_.label);
    }
    out_.raw(",\"time_scale\":");
    out_.number(opt_.time_scale);
    out_.raw(",\"ranks\":");
    out_.uint(c_.ranks);
    out_.raw(",\"actions\":");
    out_.uint(c_.t.size());
    // The makespan in the timeline's own unit, and what that unit is: microseconds only where the
    // costs were (a "makespan_us" for unit costs would claim a duration nobody measured).
    if (const double makespan = c_.t.makespan; std::isfinite(makespan)) {
      out_.raw(opt_.times_in_us ? ",\"makespan_us\":" : ",\"makespan\":");
      out_.number(makespan);
    }
    out_.raw(",\"time_unit\":");
    out_.string(opt_.times_in_us ? std::string("us")
                                 : fmt::format("the costs' unit, drawn as {:g} us", opt_.time_scale));
    out_.raw("}}\n");
  }

 private:
  // One "X" event, then its flow: bind_id on the slice (v2) or an "s"/"f" event after it (v1).
  void slice(std::size_t r, std::uint32_t e, const Action& a) {
    const Timeline& t = c_.t;
    const std::uint64_t pid = r + 1;
    std::int64_t a_ns = c_.ns(t.start[e]);
    const std::int64_t b_ns = c_.ns(t.end[e]);
    const int tid = tid_of(t.stream[e]);
    text_.clear();
    append_action_text(text_, a, c_.s.sub_actions);
    // Perfetto draws a bound arrow from the SEND's end to the RECV's start. A RECV posted before
    // its SEND ended would get an arrow back in time: its wait is drawn as a slice of its own,
    // and the RECV proper starts when the SEND ends.
    if (const std::uint32_t p = t.peer[e]; opt_.flows == TraceFlows::V2 && p != Timeline::kNone && !is_send(a.kind)) {
      const std::int64_t ready = std::clamp(c_.ns(t.end[p]), a_ns, b_ns);
      if (ready > a_ns) {
        slice_head(text_ + " (waiting)", "wait", pid, tid, a_ns, ready);
        out_.raw("},\n");
        a_ns = ready;
      }
    }
    slice_head(text_, kind_class(a.kind), pid, tid, a_ns, b_ns);
    slice_args(r, e, a);
    const std::uint32_t p = t.peer[e];
    // The flow id is the SEND's entry index + 1: unique per pair and known at both ends.
    const std::uint64_t flow_id = p == Timeline::kNone ? 0 : std::uint64_t{is_send(a.kind) ? e : p} + 1;
    if (p != Timeline::kNone && opt_.flows == TraceFlows::V2) {
      out_.raw(",\"bind_id\":");
      out_.uint(flow_id);
      out_.raw(is_send(a.kind) ? ",\"flow_out\":true" : ",\"flow_in\":true");
    }
    out_.ch('}');
    if (p != Timeline::kNone && opt_.flows == TraceFlows::V1) {
      // Strictly inside the slice (for slices of 2 ns or more), so the start binds to the SEND
      // whatever the order of events with equal timestamps; "bp":"e" binds the end to the
      // enclosing RECV rather than to the next slice.
      out_.raw(is_send(a.kind) ? ",\n{\"ph\":\"s\"," : ",\n{\"ph\":\"f\",\"bp\":\"e\",");
      out_.raw("\"name\":\"p2p\",\"cat\":\"p2p\",\"id\":");
      out_.uint(flow_id);
      out_.raw(",\"pid\":");
      out_.uint(pid);
      out_.raw(",\"tid\":");
      out_.uint(static_cast<std::uint64_t>(tid));
      out_.raw(",\"ts\":");
      out_.micros(flow_ns(p, a, a_ns, b_ns));
      out_.ch('}');
    }
    if (implicit_) implicit_flows(r, e, a);
  }

  // An "X" event up to its args: name, category, where and when.
  void slice_head(const std::string& name, std::string_view cat, std::uint64_t pid, int tid, std::int64_t a_ns,
                  std::int64_t b_ns) {
    out_.raw("{\"ph\":\"X\",\"name\":");
    out_.string(name);
    out_.raw(",\"cat\":\"");
    out_.raw(cat);
    out_.raw("\",\"pid\":");
    out_.uint(pid);
    out_.raw(",\"tid\":");
    out_.uint(static_cast<std::uint64_t>(tid));
    out_.raw(",\"ts\":");
    out_.micros(a_ns);
    out_.raw(",\"dur\":");
    out_.micros(b_ns - a_ns);
  }

  // Where a SEND's or RECV's arrow end sits: the SEND's where the transfer starts (the later of
  // the two posts), the RECV's just before the transfer ends; strictly inside the slice when it
  // is 2 ns or longer, so that it binds.
  std::int64_t flow_ns(std::uint32_t p, const Action& a, std::int64_t a_ns, std::int64_t b_ns) const {
    if (b_ns - a_ns < 2) return a_ns;
    const std::int64_t want = is_send(a.kind) ? std::max(a_ns, c_.ns(c_.t.start[p])) : b_ns - 1;
    return std::clamp(want, a_ns + 1, b_ns - 1);
  }

  // Compute-only timelines: an arrow for each input that came from another rank.
  void implicit_flows(std::size_t r, std::uint32_t e, const Action& a) {
    std::uint32_t n = 0;
    auto one = [&](const Action& x) {
      const std::uint32_t from = producer_of(x);
      const std::uint32_t to_index = n++;
      if (from == Timeline::kNone) return;
      const std::uint32_t from_rank = c_.rank_of(from);
      if (from_rank == r) return;
      const std::uint64_t id = std::uint64_t{c_.t.size()} + 1 + 2ull * e + to_index;
      const std::int64_t fa = c_.ns(c_.t.start[from]), fb = c_.ns(c_.t.end[from]);
      const std::int64_t ta = c_.ns(c_.t.start[e]), tb = c_.ns(c_.t.end[e]);
      flow_event("s", id, from_rank, fb - fa >= 2 ? fb - 1 : fa);
      flow_event("f", id, static_cast<std::uint32_t>(r), tb - ta >= 2 ? ta + 1 : ta);
    };
    if (a.is_container())
      for (const Action& sub : c_.s.subs(a)) one(sub);
    else
      one(a);
  }

  void flow_event(const char* ph, std::uint64_t id, std::uint32_t rank, std::int64_t ns) {
    out_.raw(",\n{\"ph\":\"");
    out_.raw(ph);
    out_.raw(*ph == 'f' ? "\",\"bp\":\"e\"," : "\",");
    out_.raw("\"name\":\"transfer\",\"cat\":\"p2p\",\"id\":");
    out_.uint(id);
    out_.raw(",\"pid\":");
    out_.uint(std::uint64_t{rank} + 1);
    out_.raw(",\"tid\":1,\"ts\":");
    out_.micros(ns);
    out_.ch('}');
  }

  // The entry that produced x's input on the stage next to it: F(s-1) for F(s), the backward of
  // s+1 for I or B(s); kNone where there is none.
  std::uint32_t producer_of(const Action& x) const {
    if (!x.has_stage() || !x.has_microbatch()) return Timeline::kNone;
    if (x.kind == ActionKind::F && x.stage > 0) return lookup(0, x.stage - 1u, x.microbatch());
    if (x.kind == ActionKind::I || x.kind == ActionKind::B) return lookup(1, x.stage + 1u, x.microbatch());
    return Timeline::kNone;
  }
  std::uint32_t lookup(int kind, std::uint32_t stage, std::uint32_t mb) const {
    auto it =
        producers_.find((std::uint64_t{stage} << 33) | (std::uint64_t{mb} << 1) | static_cast<std::uint64_t>(kind));
    return it == producers_.end() ? Timeline::kNone : it->second;
  }

 public:
  /// Before the slices: index every F and every backward by (stage, microbatch) when the
  /// timeline has no SEND or RECV, so its implicit transfers can be drawn.
  void index_implicit() {
    for (std::uint32_t e = 0; e < c_.t.size(); ++e)
      if (c_.t.stream[e] != Stream::Compute) return;
    implicit_ = true;
    for (std::size_t r = 0; r < c_.ranks; ++r)
      for (std::uint32_t e = c_.begin(r); e < c_.end(r); ++e) {
        const Action& a = c_.action(static_cast<std::uint32_t>(r), e);
        auto add = [&](const Action& x) {
          if (!x.has_stage() || !x.has_microbatch()) return;
          const int kind = x.kind == ActionKind::F ? 0 : (x.kind == ActionKind::I || x.kind == ActionKind::B) ? 1 : -1;
          if (kind < 0) return;
          producers_.emplace(
              (std::uint64_t{x.stage} << 33) | (std::uint64_t{x.microbatch()} << 1) | static_cast<std::uint64_t>(kind),
              e);
        };
        if (a.is_container())
          for (const Action& sub : c_.s.subs(a)) add(sub);
        else
          add(a);
      }
  }

 private:
  // The slice's args: stage, microbatch, kind, program step and the entry that released it.
  void slice_args(std::size_t r, std::uint32_t e, const Action& a) {
    const Timeline& t = c_.t;
    out_.raw(",\"args\":{");
    if (a.has_stage()) {
      out_.raw("\"stage\":");
      out_.uint(a.stage);
      out_.ch(',');
    }
    if (a.has_microbatch()) {
      out_.raw("\"microbatch\":");
      out_.uint(a.microbatch());
      out_.ch(',');
    }
    out_.raw("\"kind\":\"");
    out_.raw(kind_name(a.kind));
    out_.raw("\",\"step\":");
    out_.uint(t.step[e]);
    if (const std::uint32_t by = t.released_by[e]; by != Timeline::kNone) {
      const std::uint32_t by_rank =
          by >= c_.begin(r) && by < c_.end(r) ? static_cast<std::uint32_t>(r) : c_.rank_of(by);
      other_.clear();
      fmt::format_to(std::back_inserter(other_), "rank {} ", by_rank);
      append_action_text(other_, c_.action(by_rank, by), c_.s.sub_actions);
      out_.raw(",\"released_by\":");
      out_.string(other_);
    }
    out_.ch('}');
  }

  JsonOut& out_;
  const Ctx& c_;
  const TraceOptions& opt_;
  std::string text_, other_;  // scratch for action texts, reused so the loop does not allocate
  std::vector<bool> seen_ = std::vector<bool>(std::size_t{Action::kNoStage} + 1, false);
  bool implicit_ = false;
  std::unordered_map<std::uint64_t, std::uint32_t> producers_;  ///< (stage, microbatch, F|backward) -> entry
};

}  // namespace

void write_chrome_trace(const Schedule& s, const Timeline& t, const MemoryProfile* memory, ByteSink& sink,
                        const TraceOptions& opt) {
  check_options(opt);
  const Ctx c{s, t, opt.time_scale * 1000.0, t.rank_begin.empty() ? s.rank_count() : t.rank_count()};
  const std::vector<std::uint8_t> used = check_timeline(c);  // before the first byte is written

  JsonOut out(sink);
  TraceWriter writer(out, c, opt);
  writer.index_implicit();
  writer.header();
  for (std::size_t r = 0; r < c.ranks; ++r) {
    writer.rank_metadata(r, used[r]);
    writer.rank_slices(r);
    if (memory) writer.rank_memory(r, *memory);
  }
  writer.footer();
  out.flush();
}

}  // namespace ppsched
