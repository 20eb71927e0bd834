#include "parse/json_schedule.hpp"

#include "diag/render.hpp"
#include "support/catch.hpp"

using namespace ppsched;

namespace {
std::string first_error(std::string_view text) {
  DiagnosticSink sink;
  auto p = read_json_schedule_text("s.json", text, {}, sink);
  REQUIRE_FALSE(p);
  REQUIRE(sink.has_errors());
  for (const auto& d : sink.diagnostics())
    if (d.severity == Severity::Error) return render_text(d);
  return {};
}
}  // namespace

TEST_CASE("CSV -> JSON -> CSV is lossless, idle cells and containers included") {
  const std::string csv = "0F0,,(0F1;1B0)OVERLAP_F_B,0UNSHARD\r\n\r\n\"\"\r\n1SEND_F3\r\n";
  DiagnosticSink sink;
  auto a = read_pytorch_csv_text("s.csv", csv, {}, sink);
  REQUIRE(a);
  std::string json = to_json_schedule(a->schedule);
  auto b = read_json_schedule_text("s.json", json, {}, sink);
  REQUIRE(b);
  CHECK(same_schedule(a->schedule, b->schedule));
  CHECK(to_pytorch_csv(b->schedule) == csv);
}

TEST_CASE("the JSON writer's layout: one rank per line, optional fields only when known") {
  Schedule s;
  s.ranks.resize(2);
  s.ranks[0].actions = {Action::make(ActionKind::F, 0, 0), Action::idle()};
  s.num_stages = 2;
  s.num_microbatches = 1;
  s.placement = Placement::loop(2, 2);
  CHECK(to_json_schedule(s) ==
        "{\n  \"schema_version\": 1,\n  \"kind\": \"ppsched-schedule\",\n  \"ranks\": 2,\n"
        "  \"stages\": 2,\n  \"microbatches\": 1,\n  \"placement\": {\"style\": \"loop\"},\n"
        "  \"programs\": [\n    [\"0F0\", null],\n    []\n  ]\n}\n");
  Schedule empty;
  CHECK(to_json_schedule(empty) ==
        "{\n  \"schema_version\": 1,\n  \"kind\": \"ppsched-schedule\",\n  \"ranks\": 0,\n"
        "  \"programs\": []\n}\n");
}

TEST_CASE("placement styles are read and expanded") {
  DiagnosticSink sink;
  auto v = read_json_schedule_text(
      "s.json", R"({"schema_version":1,"stages":4,"placement":{"style":"v"},"programs":[[],[]]})", {}, sink);
  REQUIRE(v);
  CHECK(v->schedule.placement.stage_to_rank == std::vector<std::uint32_t>{0, 1, 1, 0});
  auto e = read_json_schedule_text(
      "s.json", R"({"schema_version":1,"placement":{"style":"explicit","stage_to_rank":[1,0]},"programs":[[],[]]})", {},
      sink);
  REQUIRE(e);
  CHECK(e->schedule.placement.style == PlacementStyle::Explicit);
  std::string again = to_json_schedule(e->schedule);
  CHECK(again.find("\"stage_to_rank\": [1, 0]") != std::string::npos);
}

TEST_CASE("errors: JSON problems name the place") {
  CHECK(first_error("{\"schema_version\": 1,\n \"programs\": [[\"0F0\" \"1F0\"]]}") ==
        "s.json:2:26: error: invalid JSON: syntax error while parsing array - unexpected string "
        "literal; expected ']' [json-syntax]\n \"programs\": [[\"0F0\" \"1F0\"]]}\n                         ^\n");
  CHECK(first_error("[]") ==
        "s.json:1:1: error: $: a schedule must be a JSON object, got array [json-schema]\n[]\n^\n");
  CHECK(first_error(R"({"programs":[]})") ==
        "s.json: error: $.schema_version: missing or non-integer 'schema_version' (this ppsched "
        "reads version 1) [json-schema]\n");
  CHECK(first_error(R"({"schema_version":2,"programs":[]})") ==
        "s.json:1:19: error: $.schema_version: unsupported schema_version 2 (this ppsched reads "
        "version 1) [json-schema]\n{\"schema_version\":2,\"programs\":[]}\n                  ^\n");
  CHECK(first_error(R"({"schema_version":1})") ==
        "s.json: error: $.programs: missing 'programs': an array with one array of actions per "
        "rank [json-schema]\n");
  CHECK(first_error(R"({"schema_version":1,"ranks":3,"programs":[[]]})")
            .starts_with("s.json:1:29: error: $.ranks: 'ranks' is 3 but 'programs' has 1 row(s) [json-schema]\n"));
  CHECK(first_error(R"({"schema_version":1,"programs":[["0F0", 7]]})")
            .starts_with("s.json:1:41: error: $.programs[0][1]: an action must be a string such as \"0F0\", or "
                         "null for an idle step [json-schema]\n"));
  // The caret is on the bad character inside the string, not on its quote.
  CHECK(first_error(R"({"schema_version":1,"programs":[["0F0"],["1Q0"]]})")
            .starts_with("s.json:1:44: error: $.programs[1][0]: unknown action kind 'Q' in '1Q0' [action-syntax]\n"
                         "{\"schema_version\":1,\"programs\":[[\"0F0\"],[\"1Q0\"]]}\n" +
                         std::string(43, ' ') + "^\n"));
  CHECK(first_error(R"({"schema_version":1,"stages":3,"placement":{"style":"v"},"programs":[[],[]]})")
            .starts_with("s.json:1:44: error: $.placement: a 'v' placement needs stages (3) to be a "
                         "multiple of ranks (2) [json-schema]\n"));
  CHECK(first_error(R"({"schema_version":1,"stages":-1,"programs":[]})")
            .starts_with(
                "s.json:1:30: error: $.stages: 'stages' must be an integer from 0 to 65535, got -1 [json-schema]\n"));
}

TEST_CASE("unknown keys are warnings, not errors") {
  DiagnosticSink sink;
  auto p = read_json_schedule_text("s.json", R"({"schema_version":1,"comment":"x","programs":[]})", {}, sink);
  REQUIRE(p);
  CHECK(sink.warning_count() == 1);
}
