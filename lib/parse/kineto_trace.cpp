// The Kineto trace reader (kineto_trace.hpp). One pass over traceEvents keeps four small tables
// (steps, PP ranges, launches, GPU work); the joins come after, on them alone.
#include "parse/kineto_trace.hpp"

#include <fmt/format.h>
#include <simdjson.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "io/input_file.hpp"
#include "ir/action_text.hpp"

namespace ppsched {

namespace {

namespace od = simdjson::ondemand;

constexpr std::string_view kRule = "trace-file";

struct Range {
  double start = 0, end = 0;
  std::uint64_t thread = 0;
};

struct PpRange : Range {
  Action action;
};

struct Launch {
  double ts = 0;
  std::uint64_t thread = 0;
  std::uint64_t correlation = 0;
};

struct GpuWork {
  double start = 0, end = 0;
  std::uint64_t correlation = 0;
  double stream = 0;  ///< its tid: the CUDA stream
};

struct GpuAnnotation {
  double start = 0, end = 0;
  Action action;
};

// What one pass keeps of a file.
struct Kept {
  std::optional<std::uint32_t> rank, world_size;
  std::vector<std::pair<std::uint64_t, Range>> steps;  // ProfilerStep#N
  std::vector<PpRange> pp;
  std::vector<Launch> launches;
  std::vector<GpuWork> gpu;
  std::vector<GpuAnnotation> gpu_pp;
  SubActionTable subs;     // the parts of containers (PP:(0F7;7B3)OVERLAP_F_B)
  std::string bad_action;  // the first PP: name not in PyTorch's grammar

  // A batch that was cut badly is read again: what it added is taken back first.
  struct Mark {
    std::size_t steps = 0, pp = 0, launches = 0, gpu = 0, gpu_pp = 0;
  };
  Mark mark() const { return {steps.size(), pp.size(), launches.size(), gpu.size(), gpu_pp.size()}; }
  void rollback_to(const Mark& m) {
    steps.resize(m.steps), pp.resize(m.pp), launches.resize(m.launches), gpu.resize(m.gpu), gpu_pp.resize(m.gpu_pp);
  }
};

class Reader {
 public:
  Reader(std::string name, DiagnosticSink& sink) : name_(std::move(name)), sink_(sink) {}

  void error(std::string message, const char* at = nullptr) {
    Diagnostic d;
    d.rule = std::string(kRule);
    d.loc.file = name_;
    if (at && at >= begin_ && at <= end_) {  // line and column of the byte
      std::uint32_t line = 1, column = 1;
      for (const char* p = begin_; p < at; ++p) {
        if (*p == '\n')
          ++line, column = 1;
        else
          ++column;
      }
      d.loc.line = line;
      d.loc.column = column;
    }
    d.message = std::move(message);
    sink_.report(std::move(d));
  }

  // Reads the trace in `data` (with `padding` readable bytes after it). The events are parsed a
  // batch at a time, in place (read_events), so simdjson's index covers a batch, not the file:
  // memory stays near the file's text. The rest of the top level (distributedInfo and the like,
  // small) is copied out and parsed as a document of its own.
  std::optional<MeasuredRank> read(char* data, std::size_t size, std::size_t padding) {
    begin_ = data;
    end_ = data + size;
    padding_ = padding;
    Kept kept;
    od::parser parser;
    std::string rest;  // the top-level object without traceEvents
    if (!split_top_level(rest, kept, parser)) return std::nullopt;
    const simdjson::padded_string padded(rest);
    od::document doc;
    od::object top;
    if (auto e = parser.iterate(padded).get(doc); e) return fail(e, nullptr);
    if (auto e = doc.get_object().get(top); e) return fail(e, nullptr);
    for (auto field : top) {
      std::string_view key;
      if (auto e = field.unescaped_key().get(key); e) return fail(e, nullptr);
      if (key != "distributedInfo") continue;
      if (auto e = distributed(field.value(), kept); e) return fail(e, nullptr);
    }
    return join(kept);
  }

  // The traceEvents array at `open` ('['), in batches; returns one past its ']', or nullptr after
  // reporting. Each batch is parsed where it lies: the byte before its first event (',' or '[')
  // becomes '[' and the one after its last becomes ']' while simdjson reads it, then both are put
  // back. A batch ends at the first "}," kBatch bytes on: should that be inside a string (or past
  // the array), the batch does not parse, and it is cut again at its events' exact ends.
  const char* read_events(const char* open_bracket, Kept& kept, od::parser& parser) {
    const char* p = skip_space(open_bracket + 1, end_);
    Kept::Mark mark = kept.mark();
    while (p < end_ && *p != ']') {
      const char* first = p;
      const char* last = quick_batch_end(first, end_);
      for (int attempt = 0;; ++attempt) {
        if (attempt == 1 && !(last = exact_batch_end(first, end_))) {
          error("invalid JSON: an event does not end: the trace is truncated or not well formed", first);
          return nullptr;
        }
        char* open = const_cast<char*>(first - 1);
        char* close = const_cast<char*>(last);
        const char saved_open = *open, saved_close = *close;
        *open = '[';
        *close = ']';
        od::document doc;
        simdjson::error_code e =
            parser.iterate(open, std::size_t(close - open + 1), std::size_t(end_ - open) + padding_).get(doc);
        const char* where = first;
        if (!e) {
          e = events(doc.get_value(), kept);
          if (auto loc = doc.current_location(); !loc.error()) {
            where = loc.value_unsafe();
            if (!e) e = simdjson::TRAILING_CONTENT;  // the batch went past the array's end
          }
        }
        *open = saved_open;
        *close = saved_close;
        if (!e) break;
        if (attempt == 1) return fail(e, where), nullptr;
        kept.rollback_to(mark);  // a bad cut: what that batch added goes, then the exact cut
      }
      mark = kept.mark();
      p = skip_space(last, end_);
      if (p < end_ && *p == ',') {
        p = skip_space(p + 1, end_);
      } else if (p == end_ || *p != ']') {
        error("invalid JSON: ',' or ']' expected after an event", p);
        return nullptr;
      }
    }
    if (p == end_) {
      error("invalid JSON: traceEvents does not end (a truncated trace?)", p);
      return nullptr;
    }
    return p + 1;
  }

  static constexpr std::size_t kBatch = std::size_t{4} << 20;

  // Where a batch from `first` may end: just after the first '}' followed by ',' (or the array's
  // end) that lies kBatch bytes on. A guess: a string may hold "},"; the parse then fails.
  static const char* quick_batch_end(const char* first, const char* end) {
    if (std::size_t(end - first) <= kBatch) return trim_end(first, end);
    for (const char* p = first + kBatch; p < end;) {
      const void* q = std::memchr(p, '}', std::size_t(end - p));
      if (!q) break;
      const char* brace = static_cast<const char*>(q);
      const char* next = skip_space(brace + 1, end);
      if (next < end && *next == ',') return brace + 1;
      p = brace + 1;
    }
    return trim_end(first, end);
  }

  // The end of the last value before `end` (the array's ']'), trailing blanks left out.
  static const char* trim_end(const char* first, const char* end) {
    while (end > first && (end[-1] == ' ' || end[-1] == '\n' || end[-1] == '\r' || end[-1] == '\t')) --end;
    return end;
  }

  // The exact end of the batch from `first`: whole events until kBatch bytes, or nullptr when an
  // event does not end.
  static const char* exact_batch_end(const char* first, const char* end) {
    const char* last = first;
    for (const char* p = first; p < end && *p != ']' && (last == first || std::size_t(p - first) < kBatch);) {
      const char* e = value_end(p, end);
      if (!e) return nullptr;
      last = e;
      p = skip_space(e, end);
      if (p < end && *p == ',') p = skip_space(p + 1, end);
    }
    return last;
  }

  static const char* skip_space(const char* p, const char* end) {
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
    return p;
  }

  // One past the end of the JSON value starting at p (a string, an object or array, or a scalar),
  // or nullptr when the text ends first. Strings are skipped with their escapes; nothing is
  // checked beyond nesting: simdjson checks each value when it parses it.
  static const char* value_end(const char* p, const char* end) {
    if (p >= end) return nullptr;
    if (*p == '"') return string_end(p, end);
    if (*p != '{' && *p != '[') {
      while (p < end && *p != ',' && *p != ']' && *p != '}' && *p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') ++p;
      return p;
    }
    std::size_t depth = 0;
    while (p < end) {
      const char c = *p;
      if (c == '"') {
        p = string_end(p, end);
        if (!p) return nullptr;
        continue;
      }
      if (c == '{' || c == '[')
        ++depth;
      else if ((c == '}' || c == ']') && --depth == 0)
        return p + 1;
      ++p;
    }
    return nullptr;
  }

  // One past the closing quote of the string starting at p, or nullptr.
  static const char* string_end(const char* p, const char* end) {
    for (++p; p < end;) {
      const void* q = std::memchr(p, '"', std::size_t(end - p));
      if (!q) return nullptr;
      const char* quote = static_cast<const char*>(q);
      std::size_t backslashes = 0;
      for (const char* b = quote; b > p && b[-1] == '\\'; --b) ++backslashes;
      if (backslashes % 2 == 0) return quote + 1;
      p = quote + 1;
    }
    return nullptr;
  }

  // The top-level object: traceEvents read as it comes (read_events), every other member copied
  // into `rest`.
  bool split_top_level(std::string& rest, Kept& kept, od::parser& parser) {
    const char* p = skip_space(begin_, end_);
    if (p == end_ || *p != '{') {
      error(p == end_ ? "invalid JSON: the trace is empty" : "invalid JSON: a trace is a JSON object", p);
      return false;
    }
    rest = "{";
    p = skip_space(p + 1, end_);
    while (p < end_ && *p != '}') {
      const char* key_end = *p == '"' ? string_end(p, end_) : nullptr;
      if (!key_end) return error("invalid JSON: a member of the top-level object has no name", p), false;
      const std::string_view key(p + 1, std::size_t(key_end - p - 2));
      const char* colon = skip_space(key_end, end_);
      if (colon == end_ || *colon != ':')
        return error("invalid JSON: ':' expected after a member's name", colon), false;
      const char* value = skip_space(colon + 1, end_);
      const char* value_stop = nullptr;
      if (key == "traceEvents" && value < end_ && *value == '[') {
        if (!(value_stop = read_events(value, kept, parser))) return false;
      } else {
        value_stop = value_end(value, end_);
        if (!value_stop) {
          error("invalid JSON: the trace ends inside \"" + std::string(key).substr(0, 40) +
                    "\": it is truncated or not well formed",
                value);
          return false;
        }
        if (rest.size() > 1) rest += ',';
        rest.append(p, value_stop);
      }
      p = skip_space(value_stop, end_);
      if (p < end_ && *p == ',') p = skip_space(p + 1, end_);
    }
    if (p == end_) return error("invalid JSON: the top-level object does not end (a truncated trace?)", p), false;
    rest += '}';
    return true;
  }

 private:
  std::nullopt_t fail(simdjson::error_code e, const char* at) {
    std::string why = simdjson::error_message(e);
    if (e == simdjson::INCOMPLETE_ARRAY_OR_OBJECT || e == simdjson::TAPE_ERROR)
      why = "the JSON ends early or is not well formed (a truncated trace?): " + why;
    error("invalid JSON: " + why, at);
    return std::nullopt;
  }

  static simdjson::error_code number(od::value v, double& out) {
    // Kineto writes numbers; some writers quote ids. Either is accepted.
    od::json_type t;
    if (auto e = v.type().get(t); e) return e;
    if (t == od::json_type::number) return v.get_double().get(out);
    if (t == od::json_type::string) {
      std::string_view s;
      if (auto e = v.get_string().get(s); e) return e;
      out = 0;
      for (char c : s) out = out * 31 + static_cast<unsigned char>(c);  // an id: only equality matters
      return simdjson::SUCCESS;
    }
    return simdjson::SUCCESS;  // null or other: not an id
  }

  simdjson::error_code distributed(od::value v, Kept& kept) {
    od::object o;
    if (auto e = v.get_object().get(o); e) return e;
    for (auto f : o) {
      std::string_view key;
      if (auto e = f.unescaped_key().get(key); e) return e;
      if (key != "rank" && key != "world_size") continue;
      std::uint64_t n = 0;
      if (auto e = f.value().get_uint64().get(n); e) return e;
      (key == "rank" ? kept.rank : kept.world_size) = static_cast<std::uint32_t>(n);
    }
    return simdjson::SUCCESS;
  }

  simdjson::error_code events(od::value v, Kept& kept) {
    od::array arr;
    if (auto e = v.get_array().get(arr); e) return e;
    for (auto item : arr) {
      od::object ev;
      if (auto e = item.get_object().get(ev); e) return e;
      std::string_view cat, name, ph;
      double ts = 0, dur = 0, tid = 0, pid = 0, correlation = -1;
      for (auto f : ev) {
        std::string_view key;
        if (auto e = f.unescaped_key().get(key); e) return e;
        od::value val;
        if (auto e = f.value().get(val); e) return e;
        simdjson::error_code e = simdjson::SUCCESS;
        if (key == "cat")
          e = val.get_string().get(cat);
        else if (key == "name")
          e = val.get_string().get(name);
        else if (key == "ph")
          e = val.get_string().get(ph);
        else if (key == "ts")
          e = number(val, ts);
        else if (key == "dur")
          e = number(val, dur);
        else if (key == "tid")
          e = number(val, tid);
        else if (key == "pid")
          e = number(val, pid);
        else if (key == "args")
          e = args(val, correlation);
        if (e) return e;
      }
      keep(kept, cat, name, ts, dur, thread_of(pid, tid), tid, correlation);
    }
    return simdjson::SUCCESS;
  }

  static std::uint64_t thread_of(double pid, double tid) {
    return std::hash<double>{}(pid)*1000003u ^ std::hash<double>{}(tid);
  }

  static simdjson::error_code args(od::value v, double& correlation) {
    od::object o;
    if (auto e = v.get_object().get(o); e) return simdjson::SUCCESS;  // not an object: nothing we read
    for (auto f : o) {
      std::string_view key;
      if (auto e = f.unescaped_key().get(key); e) return e;
      if (key != "correlation") continue;
      od::value val;
      if (auto e = f.value().get(val); e) return e;
      if (auto e = number(val, correlation); e) return e;
    }
    return simdjson::SUCCESS;
  }

  void keep(Kept& kept, std::string_view cat, std::string_view name, double ts, double dur, std::uint64_t thread,
            double tid, double correlation) {
    if (cat == "user_annotation") {
      if (name.starts_with("ProfilerStep#")) {
        std::uint64_t n = 0;
        for (char c : name.substr(13)) n = c >= '0' && c <= '9' ? n * 10 + std::uint64_t(c - '0') : n;
        kept.steps.push_back({n, {ts, ts + dur, thread}});
      } else if (name.starts_with("PP:")) {
        Action a;
        if (!parse_canonical_plain(name.substr(3), a)) {  // a container, or not an action at all
          CellParse c = parse_action_cell(name.substr(3), false, kept.subs);
          if (!c.accepted) {
            if (kept.bad_action.empty()) kept.bad_action = std::string(name);
            return;
          }
          a = c.action;
        }
        if (a.is_idle()) {
          if (kept.bad_action.empty()) kept.bad_action = std::string(name);
          return;
        }
        kept.pp.push_back({{ts, ts + dur, thread}, a});
      }
    } else if (cat == "gpu_user_annotation" && name.starts_with("PP:")) {
      Action a;
      if (parse_canonical_plain(name.substr(3), a) && !a.is_idle()) kept.gpu_pp.push_back({ts, ts + dur, a});
    } else if (correlation >= 0 && (cat == "cuda_runtime" || cat == "cuda_driver")) {
      kept.launches.push_back({ts, thread, static_cast<std::uint64_t>(correlation)});
    } else if (correlation >= 0 && (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset")) {
      kept.gpu.push_back({ts, ts + dur, static_cast<std::uint64_t>(correlation), tid});
    }
  }

  std::optional<MeasuredRank> join(Kept& k) {
    if (!k.bad_action.empty()) {
      error("'" + k.bad_action + "' is not a pipeline action in PyTorch's grammar (<stage><KIND><microbatch>)");
      return std::nullopt;
    }
    if (k.pp.empty()) {
      error(
          "no PP: ranges: this trace holds no pipeline action. PyTorch's _PipelineScheduleRuntime records "
          "each action as record_function(\"PP:<action>\"): profile the pipeline's step() with torch.profiler "
          "(activities CPU and CUDA) while a schedule runs through it (torchtitan: --profiling.enable_profiling)");
      return std::nullopt;
    }
    if (!k.rank || !k.world_size) {
      error(
          "no distributedInfo with rank and world_size: the profiler writes it when torch.distributed is "
          "initialized; a pipeline's traces need it to tell the ranks apart");
      return std::nullopt;
    }
    if (k.steps.empty()) {
      error("no ProfilerStep#N range: call prof.step() once per training step so that the steps can be told apart");
      return std::nullopt;
    }
    MeasuredRank out;
    out.sub_actions = std::move(k.subs);
    out.rank = *k.rank;
    out.world_size = *k.world_size;
    std::sort(k.steps.begin(), k.steps.end(),
              [](const auto& a, const auto& b) { return a.second.start < b.second.start; });
    for (const auto& [n, r] : k.steps) out.steps.push_back({n, r.start, r.end});
    // Each launch to the innermost PP range around it on its thread (ranges nest only by accident).
    std::sort(k.pp.begin(), k.pp.end(), [](const PpRange& a, const PpRange& b) {
      return a.thread != b.thread ? a.thread < b.thread : a.start < b.start;
    });
    std::unordered_map<std::uint64_t, std::uint32_t> action_of_correlation;
    action_of_correlation.reserve(k.launches.size());
    for (const Launch& l : k.launches) {
      auto it = std::upper_bound(k.pp.begin(), k.pp.end(), l, [](const Launch& x, const PpRange& r) {
        return x.thread != r.thread ? x.thread < r.thread : x.ts < r.start;
      });
      while (it != k.pp.begin()) {
        --it;
        if (it->thread != l.thread) break;
        if (l.ts <= it->end) {
          action_of_correlation.emplace(l.correlation, static_cast<std::uint32_t>(it - k.pp.begin()));
          break;
        }
        if (it->end < l.ts && it->start < l.ts - 1e9) break;  // far before: no enclosing range
      }
    }
    std::vector<MeasuredAction> actions(k.pp.size());
    for (std::size_t i = 0; i < k.pp.size(); ++i) {
      actions[i].action = k.pp[i].action;
      actions[i].cpu_start = k.pp[i].start;
      actions[i].cpu_end = k.pp[i].end;
    }
    for (const GpuWork& g : k.gpu) {
      auto it = action_of_correlation.find(g.correlation);
      if (it == action_of_correlation.end()) continue;
      MeasuredAction& a = actions[it->second];
      a.gpu_start = a.has_gpu ? std::min(a.gpu_start, g.start) : g.start;
      a.gpu_end = a.has_gpu ? std::max(a.gpu_end, g.end) : g.end;
      a.gpu_busy += g.end - g.start;
      a.has_gpu = true;
      a.gpu_stream = static_cast<std::int64_t>(g.stream);
    }
    // Where no kernel was found, a GPU annotation of the same action gives the span.
    if (!k.gpu_pp.empty()) {
      std::unordered_map<std::uint64_t, const GpuAnnotation*> by_action;
      auto key = [](const Action& a) {
        return (std::uint64_t(a.stage) << 40) ^ (std::uint64_t(a.kind) << 32) ^ a.index;
      };
      for (MeasuredAction& a : actions) {
        if (a.has_gpu) continue;
        for (const GpuAnnotation& g : k.gpu_pp)
          if (key(g.action) == key(a.action) && g.start >= a.cpu_start) {
            a.gpu_start = g.start, a.gpu_end = g.end, a.gpu_busy = g.end - g.start, a.has_gpu = true;
            break;
          }
      }
    }
    std::sort(actions.begin(), actions.end(),
              [](const MeasuredAction& a, const MeasuredAction& b) { return a.cpu_start < b.cpu_start; });
    // Each action to the step whose range holds its start; those outside every step are dropped.
    std::size_t step = 0;
    for (MeasuredAction& a : actions) {
      while (step < out.steps.size() && out.steps[step].cpu_end < a.cpu_start) ++step;
      if (step == out.steps.size()) break;
      if (a.cpu_start < out.steps[step].cpu_start) continue;
      a.step = static_cast<std::uint32_t>(step);
      out.actions.push_back(a);
    }
    return out;
  }

  std::string name_;
  DiagnosticSink& sink_;
  std::size_t padding_ = 0;  // readable bytes past end_
  const char* begin_ = nullptr;
  const char* end_ = nullptr;
};

bool gzipped(std::string_view text) {
  return text.size() >= 2 && static_cast<unsigned char>(text[0]) == 0x1f && static_cast<unsigned char>(text[1]) == 0x8b;
}

// Inflates a gzip stream (one member or several) into a buffer with simdjson's padding.
bool inflate_gzip(std::string_view in, std::string& out, std::string& why) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) return why = "zlib cannot start", false;
  out.clear();
  // The last member's ISIZE is the inflated size mod 2^32: exact for one member under 4 GiB, and
  // a first guess otherwise (the buffer doubles from there).
  std::size_t guess = in.size() * 8;
  if (in.size() >= 18) {
    const auto* t = reinterpret_cast<const unsigned char*>(in.data() + in.size() - 4);
    const std::size_t isize =
        std::size_t(t[0]) | std::size_t(t[1]) << 8 | std::size_t(t[2]) << 16 | std::size_t(t[3]) << 24;
    if (isize >= in.size()) guess = isize;
  }
  out.reserve(guess + simdjson::SIMDJSON_PADDING + 4096);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(std::min<std::size_t>(in.size(), UINT32_MAX));
  std::size_t consumed_total = 0;
  int rc = Z_OK;
  while (true) {
    if (out.size() == out.capacity() - simdjson::SIMDJSON_PADDING || out.capacity() < out.size() + 4096)
      out.reserve(out.capacity() * 2 + 4096);
    const std::size_t room = out.capacity() - out.size() - simdjson::SIMDJSON_PADDING;
    const std::size_t have = out.size();
    out.resize(have + room);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + have);
    z.avail_out = static_cast<uInt>(std::min<std::size_t>(room, UINT32_MAX));
    rc = inflate(&z, Z_NO_FLUSH);
    out.resize(out.size() - z.avail_out);
    if (rc == Z_STREAM_END) {
      consumed_total += z.total_in;
      if (consumed_total >= in.size()) break;
      inflateReset(&z);  // another gzip member follows
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + consumed_total));
      z.avail_in = static_cast<uInt>(std::min<std::size_t>(in.size() - consumed_total, UINT32_MAX));
      continue;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) break;
    if (rc == Z_BUF_ERROR && z.avail_in == 0) break;  // the input ended inside the stream
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END) return why = "the gzip stream is truncated or corrupt", false;
  out.reserve(out.size() + simdjson::SIMDJSON_PADDING);
  return true;
}

// Reads a file's bytes (followed by simdjson's padding), inflating them first when they are gzip.
std::optional<MeasuredRank> read_bytes(const std::string& name, char* data, std::size_t size, DiagnosticSink& sink) {
  Reader reader(name, sink);
  std::optional<MeasuredRank> r;
  if (gzipped(std::string_view(data, size))) {
    std::string inflated, why;
    if (!inflate_gzip(std::string_view(data, size), inflated, why)) {
      reader.error(why);
      return std::nullopt;
    }
    r = reader.read(inflated.data(), inflated.size(), inflated.capacity() - inflated.size());
  } else {
    r = reader.read(data, size, simdjson::SIMDJSON_PADDING);
  }
  if (r) r->file = name;
  return r;
}

}  // namespace

std::optional<MeasuredRank> read_kineto_trace(const std::string& path, DiagnosticSink& sink) {
  // The file's bytes once, with the padding simdjson reads past the end: no second copy.
  simdjson::padded_string text;
  if (path == "-") {
    try {
      text = simdjson::padded_string(read_whole_input(path, std::size_t{1} << 34));
    } catch (const std::exception& e) {
      Diagnostic d;
      d.rule = "io-error";
      d.loc.file = display_name(path);
      d.message = e.what();
      sink.report(std::move(d));
      return std::nullopt;
    }
  } else if (auto e = simdjson::padded_string::load(path).get(text); e) {
    Diagnostic d;
    d.rule = "io-error";
    d.loc.file = display_name(path);
    d.message = "cannot read " + display_name(path) + ": " + simdjson::error_message(e);
    sink.report(std::move(d));
    return std::nullopt;
  }
  return read_bytes(display_name(path), text.data(), text.size(), sink);
}

std::optional<MeasuredRank> read_kineto_trace_text(std::string_view name, std::string_view text, DiagnosticSink& sink) {
  simdjson::padded_string padded(text);
  return read_bytes(std::string(name), padded.data(), padded.size(), sink);
}

}  // namespace ppsched
