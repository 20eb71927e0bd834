#include "parse/topology_json.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <ranges>
#include <vector>

#include "parse/json_input.hpp"

namespace ppsched {

namespace {

constexpr std::array<std::string_view, 4> kTopKeys{"schema_version", "nodes", "slices", "links"};
constexpr std::array<std::string_view, 3> kLinkClasses{"intra_node", "inter_node", "inter_slice"};
constexpr std::array<std::string_view, 2> kLinkKeys{"latency_us", "bandwidth_gbps"};

bool read_link(JsonInput& f, const nlohmann::json& links, const char* name, Link& out) {
  std::string at = std::string("$.links.") + name;
  if (!links.contains(name)) {
    f.error("$.links", fmt::format("missing link class \"{}\"", name));
    return false;
  }
  const auto& l = links[name];
  if (!l.is_object()) return f.error(at, "a link is an object with latency_us and bandwidth_gbps"), false;
  double gbps = 0;
  bool ok = f.known_keys(l, at, kLinkKeys);
  ok &= read_json_number(f, l, at, "latency_us", out.latency_us, true, false);
  ok &= read_json_number(f, l, at, "bandwidth_gbps", gbps, true, true);
  out.bytes_per_us = gbps * 1e3;  // GB/s = 1e9 bytes/s = 1e3 bytes/us
  return ok;
}

std::optional<Topology> topology_from(JsonInput& f, std::uint32_t ranks) {
  nlohmann::json doc;
  if (!f.load(doc)) return std::nullopt;
  // A misspelt key ("slice", "latency") would leave what it meant at its default without a word.
  if (!f.known_keys(doc, "$", kTopKeys)) return std::nullopt;
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
  const auto& links = doc["links"];
  ok &= f.known_keys(links, "$.links", kLinkClasses);
  ok &= read_link(f, links, "intra_node", t.intra_node);
  // A class no pair of ranks uses may be left out: one node needs no inter_node link, one slice
  // no inter_slice link. Given anyway, it is read and checked.
  const std::size_t slice_count = doc.contains("slices") ? doc["slices"].size() : 1;
  if (nodes.size() > 1 || links.contains("inter_node"))
    ok &= read_link(f, links, "inter_node", t.inter_node);
  else
    t.inter_node = t.intra_node;
  if (slice_count > 1 || links.contains("inter_slice"))
    ok &= read_link(f, links, "inter_slice", t.inter_slice);
  else
    t.inter_slice = t.inter_node;
  if (!ok) return std::nullopt;
  return t;
}

}  // namespace

std::optional<Topology> read_topology(const std::string& path, std::uint32_t ranks, DiagnosticSink& sink) {
  JsonInput f(path, "topology-file", sink);
  return topology_from(f, ranks);
}

std::optional<Topology> read_topology_text(std::string_view name, std::string_view text, std::uint32_t ranks,
                                           DiagnosticSink& sink) {
  JsonInput f(name, text, "topology-file", sink);
  return topology_from(f, ranks);
}

void write_topology(const Topology& t, ByteSink& out) {
  std::uint32_t nodes = 0, slices = 0;
  for (std::uint32_t n : t.node_of_rank) nodes = std::max(nodes, n + 1);
  std::vector<std::vector<std::uint32_t>> ranks_of_node(nodes);
  std::vector<std::uint32_t> slice_of_node(nodes, 0);
  for (std::uint32_t r = 0; r < t.node_of_rank.size(); ++r) {
    ranks_of_node[t.node_of_rank[r]].push_back(r);
    const std::uint32_t sl = r < t.slice_of_rank.size() ? t.slice_of_rank[r] : 0;
    slice_of_node[t.node_of_rank[r]] = sl;
    slices = std::max(slices, sl + 1);
  }
  std::vector<std::vector<std::uint32_t>> nodes_of_slice(std::max(slices, 1u));
  for (std::uint32_t n = 0; n < nodes; ++n) nodes_of_slice[slice_of_node[n]].push_back(n);
  auto link = [](const Link& l) {
    return fmt::format("{{\"latency_us\": {:.6g}, \"bandwidth_gbps\": {:.6g}}}", l.latency_us,
                       l.bytes_per_us > 0 ? l.bytes_per_us / 1e3 : 1e6);
  };
  out.write(fmt::format(
      "{{\n  \"schema_version\": 1,\n  \"nodes\": [{}],\n  \"slices\": [{}],\n  \"links\": {{\n"
      "    \"intra_node\": {},\n    \"inter_node\": {},\n    \"inter_slice\": {}\n  }}\n}}\n",
      fmt::join(
          ranks_of_node | std::views::transform([](const auto& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }),
          ", "),
      fmt::join(
          nodes_of_slice | std::views::transform([](const auto& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }),
          ", "),
      link(t.intra_node), link(t.inter_node), link(t.inter_slice)));
}

}  // namespace ppsched
