// Transfer times and the topology / stage-spec readers (comm.hpp, formats in docs/formats.md).
#include "sim/comm.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "io/byte_sink.hpp"
#include "io/input_file.hpp"
#include "parse/io_diagnostic.hpp"
#include "parse/json_locate.hpp"

namespace ppsched {

const Link& Topology::link(std::uint32_t from, std::uint32_t to) const {
  if (from < slice_of_rank.size() && to < slice_of_rank.size() && slice_of_rank[from] != slice_of_rank[to])
    return inter_slice;
  if (from < node_of_rank.size() && to < node_of_rank.size() && node_of_rank[from] != node_of_rank[to])
    return inter_node;
  return intra_node;
}

double CommModel::transfer_time(std::uint32_t stage, bool forward, std::uint32_t from, std::uint32_t to) const {
  if (!topology || from == to) return 0.0;
  const Link& l = topology->link(from, to);
  double bytes = 0;
  if (stage < stages.size()) bytes = forward ? stages[stage].activation_bytes : stages[stage].gradient_bytes;
  return l.latency_us + (l.bytes_per_us > 0 ? bytes / l.bytes_per_us : 0.0);
}

namespace {

// Reads a JSON file and reports errors with file:line:col where the path can be found.
class JsonFile {
 public:
  JsonFile(std::string path, std::string rule, DiagnosticSink& sink)
      : path_(std::move(path)), name_(display_name(path_)), rule_(std::move(rule)), sink_(sink) {}
  /// Text already in memory, reported as `name`.
  JsonFile(std::string_view name, std::string_view text, std::string rule, DiagnosticSink& sink)
      : name_(name), rule_(std::move(rule)), text_(text), loaded_(true), sink_(sink) {}

  bool load(nlohmann::json& doc) {
    if (!loaded_) {
      try {
        text_ = read_whole_input(path_, std::size_t{1} << 28);
      } catch (const IoError& e) {
        sink_.report(io_diagnostic(e));
        return false;
      }
    }
    try {
      doc = nlohmann::json::parse(text_);
    } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number too large ("1e999")
      error("$", std::string("invalid JSON: ") + e.what());
      return false;
    }
    if (!doc.is_object()) return error("$", "expected a JSON object"), false;
    // Not doc.value(...): it throws when the key holds another type (an array, an object).
    auto version = doc.find("schema_version");
    if (version == doc.end() || !version->is_number_integer() || version->get<std::int64_t>() != 1)
      return error("$.schema_version", "schema_version must be 1"), false;
    return true;
  }

  void error(const std::string& at, std::string message) {
    Diagnostic d;
    d.rule = rule_;
    d.loc.file = name_;
    d.loc.path = at;
    if (auto off = locate_json_path(text_, at)) {
      std::uint32_t line = 1, col = 1;
      for (std::size_t i = 0; i < *off; ++i) {
        if (text_[i] == '\n') {
          ++line;
          col = 1;
        } else {
          ++col;
        }
      }
      d.loc.line = line;
      d.loc.column = col;
    }
    d.message = std::move(message);
    sink_.report(std::move(d));
  }

 private:
  std::string path_, name_, rule_, text_;
  bool loaded_ = false;
  DiagnosticSink& sink_;
};

bool read_number(JsonFile& f, const nlohmann::json& obj, const std::string& at, const char* key, double& out,
                 bool required, bool positive) {
  if (!obj.contains(key)) {
    if (required) f.error(at, fmt::format("missing \"{}\"", key));
    return !required;
  }
  const auto& v = obj[key];
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 ||
      (positive && v.get<double>() <= 0)) {
    f.error(at + "." + key, fmt::format("\"{}\" must be a finite number {} 0", key, positive ? ">" : ">="));
    return false;
  }
  out = v.get<double>();
  return true;
}

bool read_link(JsonFile& f, const nlohmann::json& links, const char* name, Link& out) {
  std::string at = std::string("$.links.") + name;
  if (!links.contains(name)) {
    f.error("$.links", fmt::format("missing link class \"{}\"", name));
    return false;
  }
  const auto& l = links[name];
  if (!l.is_object()) return f.error(at, "a link is an object with latency_us and bandwidth_gbps"), false;
  double gbps = 0;
  bool ok = read_number(f, l, at, "latency_us", out.latency_us, true, false);
  ok &= read_number(f, l, at, "bandwidth_gbps", gbps, true, true);
  out.bytes_per_us = gbps * 1e3;  // GB/s = 1e9 bytes/s = 1e3 bytes/us
  return ok;
}

}  // namespace

namespace {

std::optional<Topology> topology_from(JsonFile& f, std::uint32_t ranks) {
  nlohmann::json doc;
  if (!f.load(doc)) return std::nullopt;
  Topology t;
  const std::uint32_t kUnplacedRank = 0xFFFFFFFF;
  t.node_of_rank.assign(ranks, kUnplacedRank);
  t.slice_of_rank.assign(ranks, 0);
  bool ok = true;
  if (!doc.contains("nodes") || !doc["nodes"].is_array())
    return f.error("$.nodes", "\"nodes\" must list the ranks of each node, e.g. [[0, 1], [2, 3]]"), std::nullopt;
  const auto& nodes = doc["nodes"];
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    std::string at = fmt::format("$.nodes[{}]", n);
    if (!nodes[n].is_array()) {
      f.error(at, "each node is a list of ranks");
      ok = false;
      continue;
    }
    for (std::size_t i = 0; i < nodes[n].size(); ++i) {
      const auto& r = nodes[n][i];
      std::string rat = fmt::format("{}[{}]", at, i);
      if (!r.is_number_unsigned() || r.get<std::uint64_t>() >= ranks) {
        f.error(rat, fmt::format("a rank from 0 to {} expected, got {}", ranks ? ranks - 1 : 0, r.dump()));
        ok = false;
        continue;
      }
      auto rank = static_cast<std::uint32_t>(r.get<std::uint64_t>());
      if (t.node_of_rank[rank] != kUnplacedRank) {
        f.error(rat, fmt::format("rank {} is on node {} already", rank, t.node_of_rank[rank]));
        ok = false;
        continue;
      }
      t.node_of_rank[rank] = static_cast<std::uint32_t>(n);
    }
  }
  for (std::uint32_t r = 0; r < ranks; ++r)
    if (t.node_of_rank[r] == kUnplacedRank) {
      f.error("$.nodes", fmt::format("rank {} is on no node: every rank 0 to {} must be placed", r, ranks - 1));
      ok = false;
      break;
    }
  std::vector<std::uint32_t> slice_of_node(nodes.size(), 0);
  if (doc.contains("slices")) {
    const auto& slices = doc["slices"];
    std::vector<bool> seen(nodes.size(), false);
    if (!slices.is_array()) return f.error("$.slices", "\"slices\" must list the nodes of each slice"), std::nullopt;
    for (std::size_t sl = 0; sl < slices.size(); ++sl)
      for (std::size_t i = 0; slices[sl].is_array() && i < slices[sl].size(); ++i) {
        const auto& n = slices[sl][i];
        std::string at = fmt::format("$.slices[{}][{}]", sl, i);
        if (!n.is_number_unsigned() || n.get<std::uint64_t>() >= nodes.size() || seen[n.get<std::size_t>()]) {
          f.error(at, fmt::format("a node from 0 to {} not in another slice expected, got {}",
                                  !nodes.empty() ? nodes.size() - 1 : 0, n.dump()));
          ok = false;
          continue;
        }
        seen[n.get<std::size_t>()] = true;
        slice_of_node[n.get<std::size_t>()] = static_cast<std::uint32_t>(sl);
      }
    for (std::size_t n = 0; n < seen.size(); ++n)
      if (!seen[n]) {
        f.error("$.slices", fmt::format("node {} is in no slice", n));
        ok = false;
        break;
      }
  }
  for (std::uint32_t r = 0; r < ranks && ok; ++r) t.slice_of_rank[r] = slice_of_node[t.node_of_rank[r]];
  if (!doc.contains("links") || !doc["links"].is_object())
    return f.error("$.links", "\"links\" must give intra_node, inter_node and inter_slice"), std::nullopt;
  ok &= read_link(f, doc["links"], "intra_node", t.intra_node);
  ok &= read_link(f, doc["links"], "inter_node", t.inter_node);
  ok &= read_link(f, doc["links"], "inter_slice", t.inter_slice);
  if (!ok) return std::nullopt;
  return t;
}

std::optional<std::vector<StageSpec>> stage_spec_from(JsonFile& f, std::uint32_t num_stages) {
  nlohmann::json doc;
  if (!f.load(doc)) return std::nullopt;
  if (!doc.contains("stages") || !doc["stages"].is_array())
    return f.error("$.stages", "\"stages\" must list one object per stage"), std::nullopt;
  const auto& stages = doc["stages"];
  if (stages.size() != num_stages)
    return f.error("$.stages", fmt::format("{} stages described, the schedule has {}", stages.size(), num_stages)),
           std::nullopt;
  std::vector<StageSpec> out(num_stages);
  bool ok = true;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    std::string at = fmt::format("$.stages[{}]", i);
    const auto& st = stages[i];
    if (!st.is_object()) {
      f.error(at, "each stage is an object");
      ok = false;
      continue;
    }
    StageSpec& sp = out[i];
    ok &= read_number(f, st, at, "activation_bytes", sp.activation_bytes, true, false);
    sp.gradient_bytes = sp.activation_bytes;
    ok &= read_number(f, st, at, "gradient_bytes", sp.gradient_bytes, false, false);
    sp.activation_memory_bytes = sp.activation_bytes;
    ok &= read_number(f, st, at, "activation_memory_bytes", sp.activation_memory_bytes, false, false);
    ok &= read_number(f, st, at, "weight_grad_memory_bytes", sp.weight_grad_memory_bytes, false, false);
    ok &= read_number(f, st, at, "weight_bytes", sp.weight_bytes, false, false);
    if (st.contains("inputs")) {
      const auto& inputs = st["inputs"];
      for (std::size_t k = 0; inputs.is_array() && k < inputs.size(); ++k) {
        const auto& in = inputs[k];
        std::string iat = fmt::format("{}.inputs[{}]", at, k);
        if (!in.is_object() || !in.contains("name") || !in["name"].is_string()) {
          f.error(iat, "an input is {\"name\": ..., \"requires_grad\": true|false, \"keyword\": true|false}");
          ok = false;
          continue;
        }
        StageSpec::Input input;
        input.name = in["name"].get<std::string>();
        auto flag = [&](const char* key, bool& value) {
          if (!in.contains(key)) return true;
          if (!in[key].is_boolean()) {
            f.error(iat + "." + key, fmt::format("\"{}\" must be true or false", key));
            return false;
          }
          value = in[key].get<bool>();
          return true;
        };
        bool flags_ok = flag("requires_grad", input.requires_grad);
        flags_ok &= flag("keyword", input.keyword);
        ok &= flags_ok;
        sp.inputs.push_back(std::move(input));
      }
    }
  }
  if (!ok) return std::nullopt;
  return out;
}

}  // namespace

std::optional<Topology> read_topology(const std::string& path, std::uint32_t ranks, DiagnosticSink& sink) {
  JsonFile f(path, "topology-file", sink);
  return topology_from(f, ranks);
}

std::optional<Topology> read_topology_text(std::string_view name, std::string_view text, std::uint32_t ranks,
                                           DiagnosticSink& sink) {
  JsonFile f(name, text, "topology-file", sink);
  return topology_from(f, ranks);
}

std::optional<std::vector<StageSpec>> read_stage_spec(const std::string& path, std::uint32_t num_stages,
                                                      DiagnosticSink& sink) {
  JsonFile f(path, "stage-spec", sink);
  return stage_spec_from(f, num_stages);
}

std::optional<std::vector<StageSpec>> read_stage_spec_text(std::string_view name, std::string_view text,
                                                           std::uint32_t num_stages, DiagnosticSink& sink) {
  JsonFile f(name, text, "stage-spec", sink);
  return stage_spec_from(f, num_stages);
}

}  // namespace ppsched
