#include "parse/runtime_params_json.hpp"

#include "diag/render.hpp"
#include "support/catch.hpp"

using namespace ppsched;

namespace {

std::string errors(std::string_view text) {
  DiagnosticSink sink;
  auto p = read_runtime_params_text("r.json", text, sink);
  CHECK_FALSE(p);
  CHECK(sink.has_errors());
  return render_text(sink);
}

}  // namespace

TEST_CASE("runtime parameters: every field comes from the file") {
  DiagnosticSink sink;
  auto p = read_runtime_params_text("r.json", R"({"schema_version": 1, "runtime": "megatron",
 "hardware": "H100 SXM, 8 per node", "source": "measured", "p2p_call_overhead_us": 412.5})",
                                    sink);
  REQUIRE(p);
  CHECK_FALSE(sink.has_errors());
  CHECK(p->runtime == "megatron");
  CHECK(p->hardware == "H100 SXM, 8 per node");
  CHECK(p->source == "measured");
  CHECK(p->p2p_call_overhead_us == 412.5);
}

TEST_CASE("runtime parameters: hardware and source are optional and default to empty, 0 us is allowed") {
  DiagnosticSink sink;
  auto p = read_runtime_params_text("r.json", R"({"schema_version": 1, "runtime": "megatron",
 "p2p_call_overhead_us": 0})",
                                    sink);
  REQUIRE(p);
  CHECK(sink.diagnostics().empty());
  CHECK(p->runtime == "megatron");
  CHECK(p->hardware.empty());
  CHECK(p->source.empty());
  CHECK(p->p2p_call_overhead_us == 0);
}

TEST_CASE("errors: runtime parameter problems name the value, with line and column") {
  CHECK(errors("[1]") == "r.json:1:1: error: $: expected a JSON object [runtime-params-file]\n");
  CHECK(errors(R"({"schema_version": 2, "runtime": "megatron", "p2p_call_overhead_us": 900})") ==
        "r.json:1:20: error: $.schema_version: schema_version must be 1 [runtime-params-file]\n");
  CHECK(errors(R"({"runtime": "megatron", "p2p_call_overhead_us": 900})") ==
        "r.json: error: $.schema_version: schema_version must be 1 [runtime-params-file]\n");
  CHECK(errors(R"({"schema_version": 1, "p2p_call_overhead_us": 900})") ==
        "r.json:1:1: error: $: missing \"runtime\" (\"megatron\") [runtime-params-file]\n");
  CHECK(errors(R"({"schema_version": 1,
 "runtime": "pytorch", "p2p_call_overhead_us": 900})") ==
        "r.json:2:13: error: $.runtime: runtime 'pytorch' has no parameters: only 'megatron' reads a parameters "
        "file [runtime-params-file]\n");
  CHECK(errors(R"({"schema_version": 1, "runtime": "ideal", "p2p_call_overhead_us": 900})") ==
        "r.json:1:34: error: $.runtime: runtime 'ideal' has no parameters: only 'megatron' reads a parameters "
        "file [runtime-params-file]\n");
  CHECK(errors(R"({"schema_version": 1, "runtime": "deepspeed", "p2p_call_overhead_us": 900})") ==
        "r.json:1:34: error: $.runtime: unknown runtime 'deepspeed': the only runtime with parameters is "
        "'megatron' [runtime-params-file]\n");
  CHECK(errors(R"({"schema_version": 1, "runtime": ["megatron"], "p2p_call_overhead_us": 900})") ==
        "r.json:1:34: error: $.runtime: \"runtime\" must be a string: \"megatron\" [runtime-params-file]\n");
  CHECK(errors(R"({"schema_version": 1, "runtime": "megatron"})") ==
        "r.json:1:1: error: $: missing \"p2p_call_overhead_us\" [runtime-params-file]\n");
  CHECK(errors(R"({"schema_version": 1, "runtime": "megatron",
 "p2p_call_overhead_us": -1})") ==
        "r.json:2:26: error: $.p2p_call_overhead_us: \"p2p_call_overhead_us\" must be a finite number >= 0 "
        "[runtime-params-file]\n");
  CHECK(errors(R"({"schema_version": 1, "runtime": "megatron", "p2p_call_overhead_us": "900"})") ==
        "r.json:1:70: error: $.p2p_call_overhead_us: \"p2p_call_overhead_us\" must be a finite number >= 0 "
        "[runtime-params-file]\n");
  CHECK(errors(R"({"schema_version": 1, "runtime": "megatron", "p2p_call_overhead_us": 1e999})")
            .starts_with("r.json:1:70: error: invalid JSON: the number 1e999 is too large for a double"));
  CHECK(errors(R"({"schema_version": 1, "runtime": "megatron", "hardware": 80, "source": null,
 "p2p_call_overhead_us": 900})") ==
        "r.json:1:58: error: $.hardware: \"hardware\" must be a string [runtime-params-file]\n"
        "r.json:1:72: error: $.source: \"source\" must be a string [runtime-params-file]\n");
}

TEST_CASE("errors: an unknown runtime parameter key is named, with the known keys and the nearest one") {
  CHECK(errors(R"({"schema_version": 1, "runtime": "megatron",
 "p2p_overhead_us": 900})") ==
        "r.json:2:21: error: $.p2p_overhead_us: unknown key 'p2p_overhead_us'; did you mean "
        "'p2p_call_overhead_us'? [runtime-params-file]\n"
        "r.json:1:1: error: $: missing \"p2p_call_overhead_us\" [runtime-params-file]\n");
  CHECK(
      errors(R"({"schema_version": 1, "runtime": "megatron", "p2p_call_overhead_us": 900, "ranks": 8})") ==
      "r.json:1:84: error: $.ranks: unknown key 'ranks' (the keys here are schema_version, runtime, hardware, source, "
      "p2p_call_overhead_us, p2p_kernel_sms, gpu) [runtime-params-file]\n");
}

TEST_CASE("runtime parameters: the SMs an in-flight call holds are a share of a known GPU's") {
  DiagnosticSink sink;
  auto p = read_runtime_params_text("r.json", R"({"schema_version": 1, "runtime": "megatron",
 "p2p_call_overhead_us": 950, "p2p_kernel_sms": 4, "gpu": "a100"})",
                                    sink);
  REQUIRE(p);
  CHECK(p->p2p_kernel_sms == 4);
  CHECK(p->gpu == "a100");
  CHECK(errors(R"({"schema_version": 1, "runtime": "megatron", "p2p_call_overhead_us": 1, "p2p_kernel_sms": 4})")
            .starts_with("r.json:1:1: error: $: \"p2p_kernel_sms\" needs \"gpu\", the device whose SMs they are ("));
  CHECK(errors(R"({"schema_version": 1, "runtime": "megatron", "p2p_call_overhead_us": 1, "p2p_kernel_sms": 4,
 "gpu": "a1000"})")
            .starts_with("r.json:2:9: error: $.gpu: unknown gpu 'a1000' (known: "));
  CHECK(errors(R"({"schema_version": 1, "runtime": "megatron", "p2p_call_overhead_us": 1, "p2p_kernel_sms": 108,
 "gpu": "a100"})") ==
        "r.json:1:91: error: $.p2p_kernel_sms: 108 SMs would leave none of the a100's 108 for compute "
        "[runtime-params-file]\n");
  CHECK(errors(R"({"schema_version": 1, "runtime": "megatron", "p2p_call_overhead_us": 1, "p2p_kernel_sms": -1})")
            .find("$.p2p_kernel_sms") != std::string::npos);
}

TEST_CASE("errors: an empty runtime parameters file is not JSON, one that cannot be read is an io-error") {
  CHECK(errors("").starts_with("r.json:1:1: error: invalid JSON: "));
  CHECK(errors("p2p_call_overhead_us = 900\n").starts_with("r.json:1:1: error: invalid JSON: "));
  DiagnosticSink sink;
  CHECK_FALSE(read_runtime_params("/nonexistent/r.json", sink));
  REQUIRE(sink.diagnostics().size() == 1);
  CHECK(sink.diagnostics()[0].rule == "io-error");
  CHECK(sink.diagnostics()[0].loc.file == "/nonexistent/r.json");
}

TEST_CASE("the shipped schedules/megatron-a100.runtime.json reads back as megatron_a100_params()") {
  DiagnosticSink sink;
  auto p = read_runtime_params(std::string(PPSCHED_SOURCE_DIR) + "/schedules/megatron-a100.runtime.json", sink);
  INFO(render_text(sink));
  REQUIRE(p);
  CHECK(sink.diagnostics().empty());
  const RuntimeParams shipped = megatron_a100_params();
  CHECK(p->runtime == shipped.runtime);
  CHECK(p->hardware == shipped.hardware);
  CHECK(p->source == shipped.source);
  CHECK(p->p2p_call_overhead_us == shipped.p2p_call_overhead_us);
  CHECK(p->p2p_kernel_sms == shipped.p2p_kernel_sms);
  CHECK(p->gpu == shipped.gpu);
}
