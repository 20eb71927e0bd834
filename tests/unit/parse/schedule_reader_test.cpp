#include "parse/schedule_reader.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "support/catch.hpp"

using namespace ppsched;
namespace fs = std::filesystem;

namespace {
struct TempFile {
  fs::path path;
  TempFile(const std::string& name, const std::string& text) {
    path = fs::temp_directory_path() / ("ppsched-reader-" + std::to_string(::getpid()) + "-" + name);
    std::ofstream(path, std::ios::binary) << text;
  }
  ~TempFile() { fs::remove(path); }
};
}  // namespace

TEST_CASE("the format is detected from the name or the first byte") {
  TempFile csv("a.csv", "0F0,0B0\n");
  TempFile json_by_name("b.json", R"({"schema_version":1,"programs":[["0F0"]]})");
  TempFile json_by_content("c.txt", "\xEF\xBB\xBF  \n{\"schema_version\":1,\"programs\":[[\"1F0\"]]}");
  DiagnosticSink sink;
  auto a = read_schedule(csv.path.string(), {}, sink);
  auto b = read_schedule(json_by_name.path.string(), {}, sink);
  auto c = read_schedule(json_by_content.path.string(), {}, sink);
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(c);
  CHECK(a->schedule.ranks[0].actions.size() == 2);
  CHECK(b->schedule.ranks[0].actions[0] == Action::make(ActionKind::F, 0, 0));
  CHECK(c->schedule.ranks[0].actions[0] == Action::make(ActionKind::F, 1, 0));
  CHECK_FALSE(sink.has_errors());
}

TEST_CASE("a forced format wins over detection") {
  TempFile json_named_csv("d.csv", R"({"schema_version":1,"programs":[["0F0"]]})");
  DiagnosticSink sink;
  ScheduleReadOptions as_csv;
  as_csv.format = ScheduleFormat::Csv;
  CHECK_FALSE(read_schedule(json_named_csv.path.string(), as_csv, sink));  // '{' is no action
  CHECK(sink.diagnostics().front().rule == "action-syntax");
  DiagnosticSink sink2;
  CHECK(read_schedule(json_named_csv.path.string(), {}, sink2));
}

TEST_CASE("lenient mode reaches both readers") {
  TempFile csv("e.csv", "00F1\n");
  TempFile json("f.json", R"({"schema_version":1,"programs":[["00F1"]]})");
  for (const auto* f : {&csv, &json}) {
    DiagnosticSink strict, lenient;
    CHECK_FALSE(read_schedule(f->path.string(), {}, strict));
    ScheduleReadOptions opt;
    opt.lenient = true;
    auto p = read_schedule(f->path.string(), opt, lenient);
    REQUIRE(p);
    CHECK(p->schedule.ranks[0].actions[0] == Action::make(ActionKind::F, 0, 1));
    CHECK(lenient.warning_count() == 1);
  }
}

TEST_CASE("a missing file or a directory is an io-error naming the path") {
  DiagnosticSink sink;
  CHECK_FALSE(read_schedule("/nonexistent/x.json", {}, sink));
  CHECK_FALSE(read_schedule(fs::temp_directory_path().string(), {}, sink));
  REQUIRE(sink.error_count() == 2);
  CHECK(sink.diagnostics()[0].loc.file == "/nonexistent/x.json");
  CHECK(sink.diagnostics()[1].message == "cannot read: it is a directory");
}

TEST_CASE("format names") {
  CHECK(schedule_format_from_name("json") == ScheduleFormat::Json);
  CHECK(schedule_format_from_name("auto") == ScheduleFormat::Auto);
  CHECK_FALSE(schedule_format_from_name("xml"));
}

TEST_CASE("a schedule with no actions is an error at 1:1, in both formats") {
  TempFile empty_csv("empty.csv", "");
  TempFile idle_csv("idle.csv", ",,\n,\n");
  TempFile empty_json("empty.json", R"({"schema_version":1,"programs":[]})");
  TempFile idle_json("idle.json", R"({"schema_version":1,"programs":[[null],[]]})");
  for (const auto* f : {&empty_csv, &idle_csv, &empty_json, &idle_json}) {
    DiagnosticSink sink;
    CHECK_FALSE(read_schedule(f->path.string(), {}, sink));
    REQUIRE(sink.diagnostics().size() == 1);
    const Diagnostic& d = sink.diagnostics()[0];
    CHECK(d.rule == "empty-schedule");
    CHECK(d.severity == Severity::Error);
    CHECK(d.loc.line == 1);
    CHECK(d.loc.column == 1);
  }
  // One empty rank beside one that runs something is a schedule.
  TempFile one_empty_rank("r.csv", "0F0,0B0\n\n");
  DiagnosticSink sink;
  auto p = read_schedule(one_empty_rank.path.string(), {}, sink);
  REQUIRE(p);
  CHECK(p->schedule.ranks.size() == 2);
  CHECK_FALSE(sink.has_errors());
}
