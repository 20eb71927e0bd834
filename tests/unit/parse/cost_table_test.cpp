#include "parse/cost_table.hpp"

#include "diag/render.hpp"
#include "support/catch.hpp"

using namespace ppsched;

namespace {

double at(const KindCosts& c, ActionKind k) { return c[static_cast<std::size_t>(k)]; }

std::string shorthand_error(std::string_view text) {
  std::string error;
  auto parsed = parse_cost_shorthand(text, error);
  CHECK_FALSE(parsed);
  return error;
}

// Every diagnostic a cost table gets, rendered, on a model of `stages` unit-cost stages.
std::string table_errors(const std::string& name, const std::string& text, std::uint32_t stages = 2) {
  CostModel model = CostModel::uniform(stages, 1, unit_costs());
  DiagnosticSink sink;
  CHECK_FALSE(read_cost_text(name, text, model, sink));
  CHECK(sink.has_errors());
  return render_text(sink);
}

}  // namespace

TEST_CASE("the shorthand sets the kinds it names, and B is I + W unless given") {
  std::string error;
  auto c = parse_cost_shorthand("F=2,I=1.5,W=0.5,SEND_F=3", error);
  REQUIRE(c);
  CHECK(at(*c, ActionKind::F) == 2);
  CHECK(at(*c, ActionKind::I) == 1.5);
  CHECK(at(*c, ActionKind::W) == 0.5);
  CHECK(at(*c, ActionKind::B) == 2);
  CHECK(at(*c, ActionKind::SendF) == 3);
  CHECK(at(*c, ActionKind::RecvF) == 0);
  auto given = parse_cost_shorthand("B=7,I=1", error);
  REQUIRE(given);
  CHECK(at(*given, ActionKind::B) == 7);
  CHECK(at(*given, ActionKind::F) == 1);  // unit cost where not named
  auto empty = parse_cost_shorthand("", error);
  REQUIRE(empty);
  CHECK(*empty == unit_costs());
}

TEST_CASE("errors: the shorthand names the bad item") {
  CHECK(shorthand_error("F") == "'F': expected KIND=VALUE, e.g. F=1");
  CHECK(shorthand_error("F=1,Q=2") ==
        "'Q=2': unknown kind 'Q' (F, B, I, W, UNSHARD, RESHARD, REDUCE_GRAD, SEND_F, RECV_F, SEND_B, RECV_B)");
  CHECK(shorthand_error("OVERLAP_F_B=1") ==
        "'OVERLAP_F_B=1': unknown kind 'OVERLAP_F_B' (F, B, I, W, UNSHARD, "
        "RESHARD, REDUCE_GRAD, SEND_F, RECV_F, SEND_B, RECV_B)");
  CHECK(shorthand_error("W=-1") == "'W=-1': the cost must be a finite number >= 0");
  CHECK(shorthand_error("W=inf") == "'W=inf': the cost must be a finite number >= 0");
  CHECK(shorthand_error("W=") == "'W=': the cost must be a finite number >= 0");
}

TEST_CASE("errors: a kind the shorthand gives twice is refused, not last-wins") {
  CHECK(shorthand_error("F=1,B=2,F=3") == "'F=3': F is given twice (first as 'F=1'); give each kind once");
  CHECK(shorthand_error("W=1,I=1,W=1") == "'W=1': W is given twice (first as 'W=1'); give each kind once");
}

TEST_CASE("a CSV cost table overrides the stages and kinds it lists, and only those") {
  CostModel model = CostModel::uniform(2, 1, unit_costs());
  DiagnosticSink sink;
  REQUIRE(read_cost_text("c.csv", "stage,kind,time_us,note\n0,F,12.5,x\n 1 , W , 0.25 ,\n1,SEND_F,3,\n", model, sink));
  CHECK_FALSE(sink.has_errors());
  CHECK(model.cost(0, ActionKind::F) == 12.5);
  CHECK(model.cost(1, ActionKind::W) == 0.25);
  CHECK(model.cost(1, ActionKind::SendF) == 3);
  CHECK(model.cost(0, ActionKind::B) == 2);
  CHECK(model.cost(1, ActionKind::F) == 1);
}

TEST_CASE("a JSON cost table is chosen by its first non-blank byte") {
  CostModel model = CostModel::uniform(4, 1, unit_costs());
  DiagnosticSink sink;
  REQUIRE(read_cost_text("c.json",
                         "\n  {\"schema_version\": 1, \"costs\": [{\"stage\": 0, \"kind\": \"F\", \"time_us\": 12.5}, "
                         "{\"stage\": 3, \"kind\": \"W\", \"time_us\": 1e-3}]}",
                         model, sink));
  CHECK(model.cost(0, ActionKind::F) == 12.5);
  CHECK(model.cost(3, ActionKind::W) == 1e-3);
  CHECK(model.cost(3, ActionKind::F) == 1);
}

TEST_CASE("errors: a CSV cost table reports every bad row with its line") {
  CHECK(table_errors("c.csv", "stage,kind,time_us\n0,F,12.5\n7,SEND_F,3\n1,X,1\n1,W,-1\nx,F,1\n") ==
        "c.csv:3: error: stage 7 is out of range: the schedule has stages 0 to 1 [cost-file]\n"
        "c.csv:4: error: unknown kind 'X' (F, B, I, W, UNSHARD, RESHARD, REDUCE_GRAD, SEND_F, RECV_F, SEND_B, "
        "RECV_B) [cost-file]\n"
        "c.csv:5: error: time_us '-1' must be a finite number >= 0 [cost-file]\n"
        "c.csv:6: error: stage 'x' is not an integer [cost-file]\n");
  // fast-cpp-csv-parser's own errors (a missing column, a short row) come whole.
  CHECK(table_errors("c.csv", "stage,time_us\n0,1\n").starts_with("c.csv: error: "));
  CHECK(table_errors("c.csv", "stage,kind,time_us\n0,F\n").starts_with("c.csv: error: "));
}

TEST_CASE("errors: a JSON cost table reports the path, line and column of each bad cost") {
  CHECK(table_errors("c.json", "{\"costs\": 3}") ==
        "c.json: error: $.schema_version: schema_version must be 1 [cost-file]\n");
  CHECK(table_errors("c.json", "{\"schema_version\": 1, \"costs\": 3}") ==
        "c.json:1:32: error: $.costs: a cost table is an object with \"schema_version\": 1 and \"costs\": [{\"stage\", "
        "\"kind\", \"time_us\"}, ...] [cost-file]\n");
  CHECK(table_errors("c.json", "{\"schema_version\": \"1\", \"costs\": []}") ==
        "c.json:1:20: error: $.schema_version: schema_version must be 1 [cost-file]\n");
  CHECK(table_errors("c.json",
                     "{\"schema_version\": 1, \"costs\": [{\"stage\": 0, \"kind\": \"F\"}, "
                     "{\"stage\": 2, \"kind\": \"F\", \"time_us\": 1}, "
                     "{\"stage\": 1, \"kind\": \"F\", \"time_us\": -2}]}") ==
        "c.json:1:33: error: $.costs[0]: each cost needs an integer \"stage\", a string \"kind\" and a number "
        "\"time_us\" [cost-file]\n"
        "c.json:1:60: error: $.costs[1]: stage 2 is out of range: the schedule has stages 0 to 1 [cost-file]\n"
        "c.json:1:101: error: $.costs[2]: time_us must be a finite number >= 0, got -2 [cost-file]\n");
  CHECK(table_errors("c.json",
                     "{\"schema_version\": 1, \"costs\": [{\"stage\": 0, \"kind\": \"F\", \"time_us\": 1e999}]}")
            .starts_with("c.json:1:70: error: invalid JSON: the number 1e999 is too large for a double [cost-file]\n"));
  CHECK(table_errors("c.json", "{\"schema_version\": 1,\n \"costs\": [{\"stage\": 0, \"kind\": \"F\" \"time_us\": 1}]}")
            .starts_with("c.json:2:37: error: invalid JSON: "));
  CHECK(table_errors("c.json", "{\"schema_version\": 1, \"costs\": [{\"stage\": 0, \"kind\": \"F\", \"time_uss\": 1}]}")
            .starts_with("c.json:1:33: error: $.costs[0]: each cost needs"));
  CHECK(
      table_errors(
          "c.json",
          "{\"schema_version\": 1, \"costs\": [{\"stage\": 0, \"kind\": \"F\", \"time_us\": 1, \"note\": 1}]}") ==
      "c.json:1:81: error: $.costs[0].note: unknown key 'note' (the keys here are stage, kind, time_us) [cost-file]\n");
  CHECK(table_errors("c.json", "{\"schema_version\": 1, \"cost\": []}") ==
        "c.json:1:31: error: $.cost: unknown key 'cost'; did you mean 'costs'? [cost-file]\n");
}

TEST_CASE("errors: a second row for one (stage, kind) is an error naming the first, in both forms") {
  CHECK(table_errors("c.csv", "stage,kind,time_us\n0,F,1\n0,B,2\n0,F,3\n") ==
        "c.csv:4: error: stage 0 has a second F time (the first is on line 2); give each (stage, kind) once "
        "[cost-file]\n");
  CHECK(table_errors("c.json",
                     "{\"schema_version\": 1, \"costs\": [{\"stage\": 1, \"kind\": \"W\", \"time_us\": 1},\n"
                     "  {\"stage\": 1, \"kind\": \"W\", \"time_us\": 2}]}") ==
        "c.json:2:3: error: $.costs[1]: stage 1 has a second W time (the first is $.costs[0]); give each (stage, "
        "kind) once [cost-file]\n");
  CHECK(table_errors("c.json", "{\"schema_version\": 1, \"costs\": [], \"costs\": []}")
            .starts_with("c.json:1:36: error: duplicate key \"costs\": it is also given at 1:23"));
}

TEST_CASE("a byte order mark does not turn a JSON cost table into CSV, nor break a CSV header") {
  for (std::string text : {std::string("\xEF\xBB\xBF{\"schema_version\": 1, \"costs\": [{\"stage\": 1, \"kind\": "
                                       "\"F\", \"time_us\": 7}]}"),
                           std::string("\xEF\xBB\xBFstage,kind,time_us\n1,F,7\n")}) {
    CostModel m = CostModel::uniform(2, 1, unit_costs());
    DiagnosticSink sink;
    REQUIRE(read_cost_text("c", text, m, sink));
    CHECK_FALSE(sink.has_errors());
    CHECK(at(m.per_stage[1], ActionKind::F) == 7);
  }
}

TEST_CASE("the cost table writer: a header, one line per row in order, three decimals, read back as written") {
  const std::vector<CostRow> rows = {
      {0, ActionKind::F, 812.25}, {0, ActionKind::I, 790.0044}, {1, ActionKind::ReduceGrad, 3}, {12, ActionKind::W, 0}};
  const std::string csv = cost_table_csv(rows);
  CHECK(csv == "stage,kind,time_us\n0,F,812.250\n0,I,790.004\n1,REDUCE_GRAD,3.000\n12,W,0.000\n");
  std::string streamed;
  StringSink sink_out(streamed);
  write_cost_table(rows, sink_out);
  CHECK(streamed == csv);
  CHECK(cost_table_csv({}) == "stage,kind,time_us\n");

  CostModel model = CostModel::uniform(13, 1, unit_costs());
  DiagnosticSink sink;
  REQUIRE(read_cost_text("c.csv", csv, model, sink));
  CHECK(model.cost(0, ActionKind::F) == 812.25);
  CHECK(model.cost(0, ActionKind::I) == 790.004);
  CHECK(model.cost(1, ActionKind::ReduceGrad) == 3);
  CHECK(model.cost(12, ActionKind::W) == 0);
  CHECK(model.cost(12, ActionKind::F) == 1);
}

namespace {

// What check_cost_coverage says about the table `csv` on a pipeline of `needed.size()` stages.
std::string coverage(const std::string& csv, std::vector<KindSet> needed, bool fill, bool* ok = nullptr,
                     bool of_one_schedule = true) {
  CostModel model = CostModel::uniform(static_cast<std::uint32_t>(needed.size()), 1, unit_costs());
  DiagnosticSink sink;
  CostCoverage given;
  REQUIRE(read_cost_text("costs.csv", csv, model, sink, &given));
  const CostNeeds needs{std::move(needed), of_one_schedule, "the unit costs"};
  const bool fine = check_cost_coverage("costs.csv", given, needs, fill, sink);
  if (ok) *ok = fine;
  return render_text(sink);
}

constexpr KindSet kFIW = kind_bit(ActionKind::F) | kind_bit(ActionKind::I) | kind_bit(ActionKind::W);

}  // namespace

TEST_CASE("the reader records what the table priced, and only that") {
  CostModel model = CostModel::uniform(3, 1, unit_costs());
  DiagnosticSink sink;
  CostCoverage given;
  REQUIRE(read_cost_text("c.csv", "stage,kind,time_us\n0,F,1\n2,W,0\n2,SEND_F,3\n", model, sink, &given));
  CHECK(given.at(0) == kind_bit(ActionKind::F));
  CHECK(given.at(1) == 0);
  CHECK(given.at(2) == (kind_bit(ActionKind::W) | kind_bit(ActionKind::SendF)));
  CostCoverage from_json;
  const std::string json = R"({"schema_version": 1, "costs": [{"stage": 1, "kind": "B", "time_us": 2}]})";
  REQUIRE(read_cost_text("c.json", json, model, sink, &from_json));
  CHECK(from_json.at(1) == kind_bit(ActionKind::B));
}

TEST_CASE("errors: a cost table that leaves out a stage or a kind the schedule runs") {
  const std::string eight_stages = [] {
    std::string t = "stage,kind,time_us\n";
    for (char s = '0'; s < '8'; ++s) t += std::string{s} + ",F,10\n" + s + ",I,9\n" + s + ",W,8\n";
    return t;
  }();
  bool ok = true;
  CHECK(coverage(eight_stages, std::vector<KindSet>(16, kFIW), false, &ok) ==
        "costs.csv: error: the cost table gives no costs for stage 8; the schedule has 16 stages (0-15) [cost-file]\n"
        "note: add the missing rows, or pass --fill unit to take the unit costs for what the table leaves out\n");
  CHECK_FALSE(ok);
  CHECK(coverage("stage,kind,time_us\n0,F,1\n0,B,2\n1,F,1\n1,I,1\n", {kFIW, kFIW}, false, &ok) ==
        "costs.csv: error: the cost table gives stage 0 no time for I, which the schedule runs there [cost-file]\n"
        "note: add the missing rows, or pass --fill unit to take the unit costs for what the table leaves out\n");
  CHECK(
      coverage("stage,kind,time_us\n0,F,1\n", {kFIW}, false, &ok, false)
          .starts_with(
              "costs.csv: error: the cost table gives stage 0 no time for I, which the schedules tried may run there"));
  CHECK(
      coverage("stage,kind,time_us\n0,F,1\n0,I,1\n0,W,1\n", {kFIW, kFIW}, false, &ok, false)
          .starts_with("costs.csv: error: the cost table gives no costs for stage 1; the pipeline has 2 stages (0-1)"));
  // Covered: nothing to say.
  CHECK(coverage(eight_stages, std::vector<KindSet>(8, kFIW), false, &ok).empty());
  CHECK(ok);
}

TEST_CASE("fill unit: the gaps are a warning that counts them") {
  bool ok = false;
  CHECK(coverage("stage,kind,time_us\n0,F,10\n0,I,9\n0,W,8\n1,F,10\n", {kFIW, kFIW, kFIW}, true, &ok) ==
        "costs.csv: warning: --fill unit: the cost table leaves out 5 (stage, kind) times that the schedule runs (the "
        "first: I of stage 1); they take the unit costs [cost-file]\n");
  CHECK(ok);
  CHECK(coverage("stage,kind,time_us\n0,F,10\n", {kind_bit(ActionKind::F), kind_bit(ActionKind::F)}, true, &ok) ==
        "costs.csv: warning: --fill unit: the cost table leaves out 1 (stage, kind) time that the schedule runs (the "
        "first: all of stage 1); it takes the unit costs [cost-file]\n");
}
