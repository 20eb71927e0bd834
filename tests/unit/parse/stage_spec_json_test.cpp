#include "parse/stage_spec_json.hpp"

#include "diag/render.hpp"
#include "support/catch.hpp"

using namespace ppsched;

namespace {

std::string errors(std::string_view text, std::uint32_t stages = 2) {
  DiagnosticSink sink;
  auto spec = read_stage_spec_text("s.json", text, stages, sink);
  CHECK_FALSE(spec);
  CHECK(sink.has_errors());
  return render_text(sink);
}

}  // namespace

TEST_CASE("a stage spec's optional sizes default to the activation") {
  DiagnosticSink sink;
  auto spec = read_stage_spec_text("s.json", R"({"schema_version": 1, "stages": [
  {"activation_bytes": 1048576, "weight_bytes": 2e9},
  {"activation_bytes": 1000, "gradient_bytes": 500, "activation_memory_bytes": 4e6, "weight_grad_memory_bytes": 2e6,
   "inputs": [{"name": "x"}, {"name": "mask", "keyword": true, "requires_grad": false, "tensor": false}]}]})",
                                   2, sink);
  REQUIRE(spec);
  CHECK_FALSE(sink.has_errors());
  REQUIRE(spec->size() == 2);
  const StageSpec& a = (*spec)[0];
  CHECK(a.activation_bytes == 1048576);
  CHECK(a.gradient_bytes == 1048576);
  CHECK(a.activation_memory_bytes == 1048576);
  CHECK(a.weight_grad_memory_bytes == -1);  // M_W = M_B
  CHECK(a.weight_bytes == 2e9);
  CHECK(a.inputs.empty());
  const StageSpec& b = (*spec)[1];
  CHECK(b.gradient_bytes == 500);
  CHECK(b.activation_memory_bytes == 4e6);
  CHECK(b.weight_grad_memory_bytes == 2e6);
  CHECK(b.weight_bytes == 0);
  REQUIRE(b.inputs.size() == 2);
  CHECK(b.inputs[0].name == "x");
  CHECK_FALSE(b.inputs[0].keyword);
  CHECK(b.inputs[0].requires_grad);
  CHECK(b.inputs[0].tensor);  // by default
  CHECK_FALSE(b.inputs[1].tensor);
  CHECK(b.inputs[1].name == "mask");
  CHECK(b.inputs[1].keyword);
  CHECK_FALSE(b.inputs[1].requires_grad);
}

TEST_CASE("errors: stage spec problems name the value, with line and column") {
  CHECK(errors("{\"schema_version\": 1,\n \"stages\": [{}]}") ==
        "s.json:2:12: error: $.stages: the stage spec describes 1 stage; the schedule has 2 stages (0-1) "
        "[stage-spec]\n");
  CHECK(errors(R"({"schema_version": 1})") ==
        "s.json: error: $.stages: \"stages\" must list one object per stage [stage-spec]\n");
  CHECK(errors("{\"schema_version\": 1, \"stages\": [\n  7,\n  {\"gradient_bytes\": \"x\", \"weight_bytes\": -1,\n"
               "   \"inputs\": [3, {\"name\": \"m\", \"keyword\": 1, \"requires_grad\": null, \"tensor\": 0}]}]}") ==
        "s.json:2:3: error: $.stages[0]: each stage is an object [stage-spec]\n"
        "s.json:3:3: error: $.stages[1]: missing \"activation_bytes\" [stage-spec]\n"
        "s.json:3:22: error: $.stages[1].gradient_bytes: \"gradient_bytes\" must be a finite number >= 0 "
        "[stage-spec]\n"
        "s.json:3:43: error: $.stages[1].weight_bytes: \"weight_bytes\" must be a finite number >= 0 [stage-spec]\n"
        "s.json:4:15: error: $.stages[1].inputs[0]: an input is {\"name\": ..., \"requires_grad\": true|false, "
        "\"keyword\": true|false, \"tensor\": true|false} [stage-spec]\n"
        "s.json:4:63: error: $.stages[1].inputs[1].requires_grad: \"requires_grad\" must be true or false "
        "[stage-spec]\n"
        "s.json:4:43: error: $.stages[1].inputs[1].keyword: \"keyword\" must be true or false [stage-spec]\n"
        "s.json:4:79: error: $.stages[1].inputs[1].tensor: \"tensor\" must be true or false [stage-spec]\n");
  CHECK(errors("{\"schema_version\": 1, \"stages\": [}").starts_with("s.json:1:34: error: invalid JSON: "));
}

TEST_CASE("a stage spec states each stage's recompute: a mode, or a mode with its cost and memory") {
  DiagnosticSink sink;
  auto spec = read_stage_spec_text("s.json", R"({"schema_version": 1, "stages": [
  {"activation_bytes": 10, "recompute": "full"},
  {"activation_bytes": 10, "recompute": {"mode": "selective", "cost": 0.25, "kept_memory_bytes": 40,
                                         "weight_groups": 9}},
  {"activation_bytes": 10, "recompute": "none"},
  {"activation_bytes": 10}]})",
                                   4, sink);
  REQUIRE(spec);
  CHECK_FALSE(sink.has_errors());
  const Recompute& full = (*spec)[0].recompute;
  CHECK(full.mode == Recompute::Mode::Full);
  CHECK(full.cost == 1.0);              // the whole forward again
  CHECK(full.kept_memory_bytes == -1);  // the stage's activation_bytes
  CHECK(full.weight_groups == 1);
  const Recompute& selective = (*spec)[1].recompute;
  CHECK(selective.mode == Recompute::Mode::Selective);
  CHECK(selective.cost == 0.25);
  CHECK(selective.kept_memory_bytes == 40);
  CHECK(selective.weight_groups == 9);
  CHECK_FALSE((*spec)[2].recompute.active());
  CHECK_FALSE((*spec)[3].recompute.active());
}

TEST_CASE("errors: a recompute the stage spec cannot mean is named where it stands") {
  const std::string text = errors(R"({"schema_version": 1, "stages": [
  {"activation_bytes": 1, "recompute": "selective"},
  {"activation_bytes": 1, "recompute": {"mode": "most", "cost": 2}}]})");
  CHECK(text ==
        "s.json:2:40: error: $.stages[0].recompute: selective recompute needs its \"cost\" (the fraction of the "
        "forward it re-runs) and \"kept_memory_bytes\" (what the forward keeps): give {\"mode\": \"selective\", "
        "\"cost\": ..., \"kept_memory_bytes\": ...} [stage-spec]\n"
        "s.json:3:49: error: $.stages[1].recompute.mode: \"recompute\" is \"none\", \"full\", or {\"mode\": "
        "\"full\"|\"selective\", \"cost\": fraction of the forward, \"kept_memory_bytes\": ..., \"weight_groups\": "
        "...} [stage-spec]\n");
  CHECK(errors(R"({"schema_version": 1, "stages": [
  {"activation_bytes": 1, "recompute": {"mode": "full", "cost": 1.5}},
  {"activation_bytes": 1, "recompute": {"mode": "full", "weight_groups": 0}}]})") ==
        "s.json:2:65: error: $.stages[0].recompute.cost: \"cost\" is the fraction of the stage's forward one "
        "recompute re-runs: at most 1 [stage-spec]\n"
        "s.json:3:74: error: $.stages[1].recompute.weight_groups: \"weight_groups\" (parameter groups per "
        "checkpointed region) is an integer >= 1 [stage-spec]\n");
  CHECK(errors(R"({"schema_version": 1, "stages": [{"activation_bytes": 1, "recompute": 3}, {"activation_bytes": 1,
  "recompute": {"mode": "selective", "cost": 0.5}}]})") ==
        "s.json:1:71: error: $.stages[0].recompute: \"recompute\" is \"none\", \"full\", or {\"mode\": "
        "\"full\"|\"selective\", \"cost\": fraction of the forward, \"kept_memory_bytes\": ..., \"weight_groups\": "
        "...} [stage-spec]\n"
        "s.json:2:16: error: $.stages[1].recompute: missing \"kept_memory_bytes\" [stage-spec]\n");
}

TEST_CASE("errors: inputs that are not a list are an error, not a skipped check") {
  for (const char* inputs : {R"({"name": "x", "requires_grad": false})", R"("x")", "3"}) {
    std::string text =
        std::string(R"({"schema_version": 1, "stages": [{"activation_bytes": 1, "inputs": )") + inputs + "}]}";
    std::string out = errors(text, 1);
    CHECK(out.starts_with("s.json:1:68: error: $.stages[0].inputs: \"inputs\" must be a list, got "));
  }
  CHECK(errors(R"({"schema_version": 1, "stages": [{"activation_bytes": 1, "inputs": "x"}]})", 1)
            .starts_with("s.json:1:68: error: $.stages[0].inputs: \"inputs\" must be a list, got string: "));
}

TEST_CASE("errors: a misspelt key is an error with did you mean, at every level") {
  CHECK(errors(R"({"schema_version": 1, "stages": [{"activation_bytes": 1, "weight_byte": 4}]})", 1) ==
        "s.json:1:73: error: $.stages[0].weight_byte: unknown key 'weight_byte'; did you mean 'weight_bytes'? "
        "[stage-spec]\n");
  CHECK(errors(R"({"schema_version": 1, "stages": [{"activation_bytes": 1,
  "inputs": [{"name": "x", "requires_grads": false}]}]})",
               1) ==
        "s.json:2:46: error: $.stages[0].inputs[0].requires_grads: unknown key 'requires_grads'; did you mean "
        "'requires_grad'? [stage-spec]\n");
  CHECK(errors(R"({"schema_version": 1, "stage": []})", 1) ==
        "s.json:1:32: error: $.stage: unknown key 'stage'; did you mean 'stages'? [stage-spec]\n");
  CHECK(errors(R"({"schema_version": 1, "stages": [{"activation_bytes": 1,
  "recompute": {"mode": "full", "costs": 1}}]})",
               1) ==
        "s.json:2:42: error: $.stages[0].recompute.costs: unknown key 'costs'; did you mean 'cost'? [stage-spec]\n");
}

TEST_CASE("errors: a stage spec's duplicate key and syntax error are placed exactly") {
  CHECK(errors(R"({"schema_version": 1, "stages": [{"activation_bytes": 1, "activation_bytes": 2}]})", 1) ==
        "s.json:1:58: error: duplicate key \"activation_bytes\": it is also given at 1:35 (ppsched does not guess "
        "which one is meant) [stage-spec]\n"
        "{\"schema_version\": 1, \"stages\": [{\"activation_bytes\": 1, \"activation_bytes\": 2}]}\n" +
            std::string(57, ' ') + "^~~~~~~~~~~~~~~~~~\n" +
            "s.json:1:35: note: the first \"activation_bytes\" is here\n"
            "{\"schema_version\": 1, \"stages\": [{\"activation_bytes\": 1, \"activation_bytes\": 2}]}\n" +
            std::string(34, ' ') + "^~~~~~~~~~~~~~~~~~\n");
  CHECK(errors("{\"schema_version\": 1,\n \"stages\": [{\"activation_bytes\": 1,}]}", 1)
            .starts_with("s.json:2:36: error: invalid JSON: "));
  // A byte order mark is skipped.
  DiagnosticSink sink;
  CHECK(read_stage_spec_text("s.json", "\xEF\xBB\xBF{\"schema_version\": 1, \"stages\": [{\"activation_bytes\": 1}]}",
                             1, sink));
}
