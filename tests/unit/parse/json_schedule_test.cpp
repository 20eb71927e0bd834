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
        "s.json:2:22: error: invalid JSON: syntax error while parsing array - unexpected string "
        "literal; expected ']' [json-syntax]\n \"programs\": [[\"0F0\" \"1F0\"]]}\n                     ^~~~~\n");
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

TEST_CASE("unknown keys are errors, with did you mean") {
  DiagnosticSink sink;
  auto p = read_json_schedule_text("s.json", R"({"schema_version":1,"microbatch":2,"programs":[]})", {}, sink);
  CHECK_FALSE(p);
  REQUIRE(sink.diagnostics().size() == 1);
  const Diagnostic& d = sink.diagnostics()[0];
  CHECK(d.severity == Severity::Error);
  CHECK(d.loc.line == 1);
  CHECK(d.loc.column == 34);  // the value of the unknown key
  CHECK(d.message.starts_with("unknown key 'microbatch'"));
  CHECK(d.message.ends_with("did you mean 'microbatches'?"));
}

TEST_CASE("errors: a duplicate key is an error at its second place, with a note at the first") {
  CHECK(first_error("{\"schema_version\": 1,\n \"programs\": [[\"0F0\"]],\n \"programs\": [[\"0B0\"]]}") ==
        "s.json:3:2: error: duplicate key \"programs\": it is also given at 2:2 (ppsched does not guess which "
        "one is meant) [json-schema]\n \"programs\": [[\"0B0\"]]}\n ^~~~~~~~~~\n"
        "s.json:2:2: note: the first \"programs\" is here\n \"programs\": [[\"0F0\"]],\n ^~~~~~~~~~\n");
  CHECK(first_error(R"({"schema_version":1,"placement":{"style":"loop","style":"v"},"stages":1,"programs":[["0F0"]]})")
            .starts_with("s.json:1:49: error: duplicate key \"style\": it is also given at 1:34"));
}

TEST_CASE("errors: the cells wait for the header, and the header for the syntax") {
  // programs before schema_version: a version this ppsched does not read is the one error.
  CHECK(first_error(R"({"programs":[["1Q0"]],"schema_version":2})")
            .starts_with("s.json:1:40: error: $.schema_version: unsupported schema_version 2"));
  // A syntax error after bad cells is the one error.
  DiagnosticSink sink;
  CHECK_FALSE(read_json_schedule_text("s.json", R"({"schema_version":1,"programs":[["1Q0"]],})", {}, sink));
  REQUIRE(sink.diagnostics().size() == 1);
  CHECK(sink.diagnostics()[0].rule == "json-syntax");
  CHECK(sink.diagnostics()[0].loc.column == 42);
}

TEST_CASE("errors: every kind of misplaced value is named at its place") {
  CHECK(first_error(R"({"schema_version":1,"programs":{"0":["0F0"]}})")
            .starts_with("s.json:1:32: error: $.programs: missing 'programs': an array with one array of actions "
                         "per rank, got object [json-schema]\n"));
  CHECK(first_error(R"({"schema_version":1,"programs":"0F0"})")
            .starts_with("s.json:1:32: error: $.programs: missing 'programs': an array with one array of actions "
                         "per rank, got string [json-schema]\n"));
  CHECK(first_error(R"({"schema_version":1,"programs":[["0F0"],{"a":1},"1F0"]})")
            .starts_with("s.json:1:41: error: $.programs[1]: each rank's program must be an array of actions"));
  CHECK(first_error(R"({"schema_version":1,"programs":[["0F0",["0B0"],{"x":[1]}]]})")
            .starts_with("s.json:1:40: error: $.programs[0][1]: an action must be a string"));
  DiagnosticSink sink;
  CHECK_FALSE(
      read_json_schedule_text("s.json", R"({"schema_version":1,"programs":[["0F0",["0B0"],{"x":[1]}]]})", {}, sink));
  REQUIRE(sink.diagnostics().size() == 2);
  CHECK(sink.diagnostics()[1].loc.path == "$.programs[0][2]");  // what a skipped cell holds is no cell
  CHECK(sink.diagnostics()[1].loc.column == 48);
  CHECK(first_error("{\"schema_version\":1,\"programs\":[[\"0F0\",\n  \"0F0\\u0041\"]]}")
            .starts_with("s.json:2:7: error: $.programs[0][1]:"));
}

TEST_CASE("a byte order mark is skipped, and positions count from the file's first byte") {
  DiagnosticSink sink;
  auto p = read_json_schedule_text("s.json", "\xEF\xBB\xBF{\"schema_version\":1,\"programs\":[[\"0F0\"]]}", {}, sink);
  REQUIRE(p);
  CHECK(p->schedule.ranks[0].actions.size() == 1);
  CHECK(first_error("\xEF\xBB\xBF{\"schema_version\":1,\"programs\":[[\"1Q0\"]]}").starts_with("s.json:1:39: error:"));
}

TEST_CASE("a large schedule reads to the same IR, its errors placed exactly") {
  // 64 ranks x 4000 actions: the streaming reader against the writer, byte for byte both ways.
  Schedule s;
  for (std::uint32_t r = 0; r < 64; ++r) {
    auto& p = s.ranks.emplace_back().actions;
    for (std::uint32_t m = 0; m < 2000; ++m) {
      p.push_back(Action::make(ActionKind::F, r, m));
      p.push_back(m % 7 ? Action::make(ActionKind::B, r, m) : Action::idle());
    }
  }
  std::string text = to_json_schedule(s);
  DiagnosticSink sink;
  auto back = read_json_schedule_text("big.json", text, {}, sink);
  REQUIRE(back);
  CHECK(same_schedule(s, back->schedule));
  CHECK(to_json_schedule(back->schedule) == text);
  // A bad cell near the end is reported at its line and column.
  std::size_t at = text.rfind("\"63F1999\"");
  REQUIRE(at != std::string::npos);
  text.replace(at + 3, 1, "Q");
  std::size_t line_start = text.rfind('\n', at) + 1;
  auto line =
      static_cast<std::uint32_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n') + 1);
  DiagnosticSink sink2;
  CHECK_FALSE(read_json_schedule_text("big.json", text, {}, sink2));
  REQUIRE(sink2.diagnostics().size() == 1);
  CHECK(sink2.diagnostics()[0].loc.line == line);
  CHECK(sink2.diagnostics()[0].loc.column == at + 3 - line_start + 1);
}
