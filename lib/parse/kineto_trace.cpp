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

  std::optional<MeasuredRank> read(const char* data, std::size_t size, std::size_t capacity) {
    begin_ = data;
    end_ = data + size;
    od::parser parser;
    od::document doc;
    if (auto e = parser.iterate(data, size, capacity).get(doc); e) return fail(e, nullptr);
    Kept kept;
    od::object top;
    if (auto e = doc.get_object().get(top); e) return fail(e, doc);
    for (auto field : top) {
      std::string_view key;
      if (auto e = field.unescaped_key().get(key); e) return fail(e, doc);
      simdjson::error_code e = simdjson::SUCCESS;
      if (key == "traceEvents")
        e = events(field.value(), kept);
      else if (key == "distributedInfo")
        e = distributed(field.value(), kept);
      if (e) return fail(e, doc);
    }
    return join(kept);
  }

 private:
  std::nullopt_t fail(simdjson::error_code e, od::document& doc) {
    const char* at = nullptr;
    if (auto loc = doc.current_location(); !loc.error()) at = loc.value_unsafe();
    return fail(e, at);
  }
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
      keep(kept, cat, name, ts, dur, thread_of(pid, tid), correlation);
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
            double correlation) {
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
      kept.gpu.push_back({ts, ts + dur, static_cast<std::uint64_t>(correlation)});
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

// Reads `text` (a file's bytes, with simdjson's padding after `size`), inflating it first when
// it is gzip.
std::optional<MeasuredRank> read_bytes(const std::string& name, const char* data, std::size_t size,
                                       std::size_t capacity, DiagnosticSink& sink) {
  Reader reader(name, sink);
  std::optional<MeasuredRank> r;
  if (gzipped(std::string_view(data, size))) {
    std::string inflated, why;
    if (!inflate_gzip(std::string_view(data, size), inflated, why)) {
      reader.error(why);
      return std::nullopt;
    }
    r = reader.read(inflated.data(), inflated.size(), inflated.capacity());
  } else {
    r = reader.read(data, size, capacity);
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
  return read_bytes(display_name(path), text.data(), text.size(), text.size() + simdjson::SIMDJSON_PADDING, sink);
}

std::optional<MeasuredRank> read_kineto_trace_text(std::string_view name, std::string_view text, DiagnosticSink& sink) {
  const simdjson::padded_string padded(text);
  return read_bytes(std::string(name), padded.data(), padded.size(), padded.size() + simdjson::SIMDJSON_PADDING, sink);
}

}  // namespace ppsched
