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
      return is_json ? read_json_schedule_text("<stdin>", text, js, sink)
                     : read_pytorch_csv_text("<stdin>", text, csv, sink);
    }
    bool is_json = opt.format == ScheduleFormat::Json;
    if (opt.format == ScheduleFormat::Auto) is_json = path.ends_with(".json") || looks_like_json(peek(path));
    return is_json ? read_json_schedule(path, js, sink) : read_pytorch_csv(path, csv, sink);
  } catch (const IoError& e) {
    sink.report(io_diagnostic(e));
    return std::nullopt;
  }
}

}  // namespace ppsched
