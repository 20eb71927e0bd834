#include "parse/schedule_reader.hpp"

#include <fcntl.h>
#include <unistd.h>

#include "io/input_file.hpp"
#include "parse/io_diagnostic.hpp"

namespace ppsched {

std::optional<ScheduleFormat> schedule_format_from_name(std::string_view name) {
  if (name == "auto") return ScheduleFormat::Auto;
  if (name == "csv") return ScheduleFormat::Csv;
  if (name == "json") return ScheduleFormat::Json;
  return std::nullopt;
}

namespace {

bool looks_like_json(std::string_view head) {
  if (head.starts_with("\xEF\xBB\xBF")) head.remove_prefix(3);
  for (char c : head) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    return c == '{';
  }
  return false;
}

// The first bytes of a file, to tell JSON from CSV without reading it all.
std::string peek(const std::string& path) {
  int fd = open_input(path);
  char buf[256];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

// A schedule with no action at all is a truncated or empty file (a zero-byte upload, /dev/null,
// a JSON schedule with empty programs): it would pass every check and simulate to a makespan
// of 0, so it is an error. A rank with no actions inside a schedule that has some may be meant.
std::optional<ParsedSchedule> refuse_empty(std::optional<ParsedSchedule> parsed, std::string name,
                                           DiagnosticSink& sink) {
  if (!parsed) return parsed;
  for (const RankProgram& rank : parsed->schedule.ranks)
    for (const Action& a : rank.actions)
      if (!a.is_idle()) return parsed;
  Diagnostic d;
  d.rule = "empty-schedule";
  d.loc = {std::move(name), 1, 1, {}};
  d.message = parsed->schedule.ranks.empty() ? "the schedule is empty: it has no ranks and no actions"
                                             : "the schedule has no actions: every rank's program is empty or idle";
  Note n;
  n.message = "a truncated or empty file is never a schedule; give at least one action, e.g. 0F0";
  d.notes.push_back(std::move(n));
  sink.report(std::move(d));
  return std::nullopt;
}

}  // namespace

std::optional<ParsedSchedule> read_schedule(const std::string& path, const ScheduleReadOptions& opt,
                                            DiagnosticSink& sink) {
  CsvReadOptions csv;
  csv.lenient = opt.lenient;
  csv.dialect = opt.dialect;
  JsonReadOptions js;
  js.lenient = opt.lenient;
  try {
    if (path == "-") {
      // Standard input can be read once only: take it whole, then decide.
      std::string text = read_whole_input(path);
      bool is_json =
          opt.format == ScheduleFormat::Json || (opt.format == ScheduleFormat::Auto && looks_like_json(text));
      return refuse_empty(is_json ? read_json_schedule_text("<stdin>", text, js, sink)
                                  : read_pytorch_csv_text("<stdin>", text, csv, sink),
                          "<stdin>", sink);
    }
    bool is_json = opt.format == ScheduleFormat::Json;
    if (opt.format == ScheduleFormat::Auto) is_json = path.ends_with(".json") || looks_like_json(peek(path));
    return refuse_empty(is_json ? read_json_schedule(path, js, sink) : read_pytorch_csv(path, csv, sink),
                        display_name(path), sink);
  } catch (const IoError& e) {
    sink.report(io_diagnostic(e));
    return std::nullopt;
  }
}

}  // namespace ppsched
