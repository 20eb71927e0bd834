#include "parse/topology_json.hpp"

#include "diag/render.hpp"
#include "io/byte_sink.hpp"
#include "support/catch.hpp"

using namespace ppsched;

namespace {

const char* const kTwoSlices = R"({"schema_version": 1, "nodes": [[0, 1], [2, 3]], "slices": [[0], [1]],
 "links": {"intra_node": {"latency_us": 2, "bandwidth_gbps": 400},
           "inter_node": {"latency_us": 5, "bandwidth_gbps": 50},
           "inter_slice": {"latency_us": 30, "bandwidth_gbps": 12.5}}})";

std::string errors(std::string_view text, std::uint32_t ranks = 4) {
  DiagnosticSink sink;
  auto t = read_topology_text("t.json", text, ranks, sink);
  CHECK_FALSE(t);
  CHECK(sink.has_errors());
  return render_text(sink);
}

}  // namespace

TEST_CASE("a topology places ranks on nodes and slices, and GB/s become bytes per microsecond") {
  DiagnosticSink sink;
  auto t = read_topology_text("t.json", kTwoSlices, 4, sink);
  REQUIRE(t);
  CHECK_FALSE(sink.has_errors());
  CHECK(t->node_of_rank == std::vector<std::uint32_t>{0, 0, 1, 1});
  CHECK(t->slice_of_rank == std::vector<std::uint32_t>{0, 0, 1, 1});
  CHECK(t->link(0, 1).latency_us == 2);
  CHECK(t->link(0, 1).bytes_per_us == 400e3);
  CHECK(t->link(1, 2).latency_us == 30);
  CHECK(t->link(1, 2).bytes_per_us == 12.5e3);
}

TEST_CASE("without slices every node is in slice 0: ranks on two nodes use the inter-node link") {
  DiagnosticSink sink;
  auto t = read_topology_text("t.json", R"({"schema_version": 1, "nodes": [[1], [0]],
   "links": {"intra_node": {"latency_us": 0, "bandwidth_gbps": 1}, "inter_node": {"latency_us": 5, "bandwidth_gbps": 1},
             "inter_slice": {"latency_us": 9, "bandwidth_gbps": 1}}})",
                              2, sink);
  REQUIRE(t);
  CHECK(t->node_of_rank == std::vector<std::uint32_t>{1, 0});
  CHECK(t->slice_of_rank == std::vector<std::uint32_t>{0, 0});
  CHECK(t->link(0, 1).latency_us == 5);
}

TEST_CASE("a link class no pair of ranks uses may be left out: one slice, one node") {
  DiagnosticSink sink;
  auto two_nodes = read_topology_text("t.json", R"({"schema_version": 1, "nodes": [[0, 1], [2, 3]],
   "links": {"intra_node": {"latency_us": 2, "bandwidth_gbps": 400}, "inter_node": {"latency_us": 5, "bandwidth_gbps": 50}}})",
                                      4, sink);
  REQUIRE(two_nodes);
  CHECK(two_nodes->link(1, 2).latency_us == 5);
  CHECK(two_nodes->link(0, 1).latency_us == 2);
  auto one_node = read_topology_text(
      "t.json",
      R"({"schema_version": 1, "nodes": [[0, 1]], "links": {"intra_node": {"latency_us": 3, "bandwidth_gbps": 9}}})", 2,
      sink);
  REQUIRE(one_node);
  CHECK(one_node->link(0, 1).bytes_per_us == 9e3);
  CHECK_FALSE(sink.has_errors());
}

TEST_CASE("errors: topology problems name the value, with line and column") {
  CHECK(errors("[1]") == "t.json:1:1: error: $: expected a JSON object [topology-file]\n");
  CHECK(errors(R"({"schema_version": 2})") ==
        "t.json:1:20: error: $.schema_version: schema_version must be 1 [topology-file]\n");
  CHECK(errors(R"({"schema_version": 1, "nodes": {}})") ==
        "t.json:1:32: error: $.nodes: \"nodes\" must list the ranks of each node, e.g. [[0, 1], [2, 3]] "
        "[topology-file]\n");
  CHECK(errors(R"({"schema_version": 1,
 "nodes": [[0, 1], [1, 7], 2],
 "links": {"intra_node": {"latency_us": 2, "bandwidth_gbps": 400},
           "inter_node": {"latency_us": -1, "bandwidth_gbps": 0},
           "inter_slice": {"bandwidth_gbps": 12.5}}})") ==
        "t.json:2:21: error: $.nodes[1][0]: rank 1 is on node 0 already [topology-file]\n"
        "t.json:2:24: error: $.nodes[1][1]: a rank from 0 to 3 expected, got 7 [topology-file]\n"
        "t.json:2:28: error: $.nodes[2]: each node is a list of ranks [topology-file]\n"
        "t.json:2:11: error: $.nodes: rank 2 is on no node: every rank 0 to 3 must be placed [topology-file]\n"
        "t.json:4:41: error: $.links.inter_node.latency_us: \"latency_us\" must be a finite number >= 0 "
        "[topology-file]\n"
        "t.json:4:63: error: $.links.inter_node.bandwidth_gbps: \"bandwidth_gbps\" must be a finite number > 0 "
        "[topology-file]\n"
        "t.json:5:27: error: $.links.inter_slice: missing \"latency_us\" [topology-file]\n");
  CHECK(errors(R"({"schema_version": 1, "nodes": [[0], [1]], "slices": [[0, 0]], "links": {}})", 2) ==
        "t.json:1:59: error: $.slices[0][1]: a node from 0 to 1 not in another slice expected, got 0 "
        "[topology-file]\n"
        "t.json:1:54: error: $.slices: node 1 is in no slice [topology-file]\n"
        "t.json:1:73: error: $.links: missing link class \"intra_node\" [topology-file]\n"
        "t.json:1:73: error: $.links: missing link class \"inter_node\" [topology-file]\n");
  // Two slices need the link between them.
  CHECK(errors(R"({"schema_version": 1, "nodes": [[0], [1]], "slices": [[0], [1]],
 "links": {"intra_node": {"latency_us": 2, "bandwidth_gbps": 400}, "inter_node": {"latency_us": 5, "bandwidth_gbps": 50}}})",
               2) == "t.json:2:11: error: $.links: missing link class \"inter_slice\" [topology-file]\n");
  CHECK(errors(R"({"schema_version": 1, "nodes": [[0]]})", 1) ==
        "t.json: error: $.links: \"links\" must give intra_node, inter_node and inter_slice [topology-file]\n");
  CHECK(errors(R"({"schema_version": 1, "nodes": [[0]], "links": {"intra_node": 1e999}})", 1)
            .starts_with(
                "t.json:1:63: error: invalid JSON: the number 1e999 is too large for a double [topology-file]\n"));
}

TEST_CASE("errors: a topology file that cannot be read is an io-error") {
  DiagnosticSink sink;
  CHECK_FALSE(read_topology("/nonexistent/t.json", 2, sink));
  REQUIRE(sink.diagnostics().size() == 1);
  CHECK(sink.diagnostics()[0].rule == "io-error");
  CHECK(sink.diagnostics()[0].loc.file == "/nonexistent/t.json");
}

TEST_CASE("a written topology (run --topology-out) reads back as the same topology") {
  DiagnosticSink sink;
  auto t = read_topology_text("t.json", kTwoSlices, 4, sink);
  REQUIRE(t);
  t->node_of_rank = {1, 0, 0, 1};  // ranks on nodes out of order, as processes may be placed
  t->slice_of_rank = {0, 0, 0, 0};
  t->inter_slice.bytes_per_us = 0;  // not measured: infinite to the simulator
  std::string text;
  StringSink out(text);
  write_topology(*t, out);
  auto back = read_topology_text("written.json", text, 4, sink);
  INFO(text);
  REQUIRE(back);
  CHECK(back->node_of_rank == t->node_of_rank);
  CHECK(back->slice_of_rank == t->slice_of_rank);
  CHECK(back->intra_node.latency_us == 2);
  CHECK(back->intra_node.bytes_per_us == 400e3);
  CHECK(back->inter_node.bytes_per_us == 50e3);
  CHECK(back->inter_slice.bytes_per_us == 1e9);  // written as 1e6 GB/s: the file needs a positive figure
}

TEST_CASE("errors: a topology's unknown keys are errors, with did you mean") {
  CHECK(errors(R"({"schema_version": 1, "nodes": [[0]], "slice": [[0]], "links": {}})", 1) ==
        "t.json:1:48: error: $.slice: unknown key 'slice'; did you mean 'slices'? [topology-file]\n");
  CHECK(errors(R"({"schema_version": 1, "nodes": [[0]], "links": {
  "intra_node": {"latency_us": 1, "bandwidth_gbps": 1},
  "inter_node": {"latency_us": 1, "bandwith_gbps": 1, "bandwidth_gbps": 1},
  "inter_slice": {"latency_us": 1, "bandwidth_gbps": 1}, "inter_rack": {}}})",
               1) ==
        "t.json:4:72: error: $.links.inter_rack: unknown key 'inter_rack' (the keys here are intra_node, "
        "inter_node, inter_slice) [topology-file]\n"
        "t.json:3:52: error: $.links.inter_node.bandwith_gbps: unknown key 'bandwith_gbps'; did you mean "
        "'bandwidth_gbps'? [topology-file]\n");
}
