#include "parse/cost_table.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "io/byte_sink.hpp"
#include "io/input_file.hpp"
#include "parse/fccp.hpp"
#include "parse/io_diagnostic.hpp"
#include "parse/json_input.hpp"

namespace ppsched {

namespace {

std::optional<double> parse_cost_value(std::string_view text) {
  std::string s(text);
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

std::optional<ActionKind> cost_kind(std::string_view name) {
  auto k = kind_from_name(name);
  if (!k || *k == ActionKind::OverlapFB) return std::nullopt;
  return k;
}

}  // namespace

std::optional<KindCosts> parse_cost_shorthand(std::string_view text, std::string& error) {
  KindCosts c = unit_costs();
  bool b_given = false;
  std::array<std::string_view, std::tuple_size_v<KindCosts>> given{};  // each kind's item, once given
  while (!text.empty()) {
    auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    auto eq = item.find('=');
    if (eq == std::string_view::npos) {
      error = fmt::format("'{}': expected KIND=VALUE, e.g. F=1", item);
      return std::nullopt;
    }
    auto kind = cost_kind(item.substr(0, eq));
    if (!kind) {
      error = fmt::format(
          "'{}': unknown kind '{}' (F, B, I, W, UNSHARD, RESHARD, REDUCE_GRAD, SEND_F, "
          "RECV_F, SEND_B, RECV_B)",
          item, item.substr(0, eq));
      return std::nullopt;
    }
    auto value = parse_cost_value(item.substr(eq + 1));
    if (!value) {
      error = fmt::format("'{}': the cost must be a finite number >= 0", item);
      return std::nullopt;
    }
    auto& earlier = given[static_cast<std::size_t>(*kind)];
    if (!earlier.empty()) {
      error =
          fmt::format("'{}': {} is given twice (first as '{}'); give each kind once", item, kind_name(*kind), earlier);
      return std::nullopt;
    }
    earlier = item;
    c[static_cast<std::size_t>(*kind)] = *value;
    b_given |= *kind == ActionKind::B;
  }
  if (!b_given)
    c[static_cast<std::size_t>(ActionKind::B)] =
        c[static_cast<std::size_t>(ActionKind::I)] + c[static_cast<std::size_t>(ActionKind::W)];
  return c;
}

namespace {

Diagnostic cost_error(const std::string& file, std::uint32_t line, std::string path, std::string msg) {
  Diagnostic d;
  d.rule = "cost-file";
  d.loc = {file, line, 0, std::move(path)};
  d.message = std::move(msg);
  return d;
}

bool set_cost(CostModel& model, CostCoverage* given, std::int64_t stage, std::string_view kind_name, double value,
              const std::function<void(std::string)>& fail) {
  if (stage < 0 || static_cast<std::size_t>(stage) >= model.per_stage.size()) {
    fail(fmt::format("stage {} is out of range: the schedule has stages 0 to {}", stage,
                     model.per_stage.empty() ? 0 : model.per_stage.size() - 1));
    return false;
  }
  auto kind = cost_kind(kind_name);
  if (!kind) {
    fail(
        fmt::format("unknown kind '{}' (F, B, I, W, UNSHARD, RESHARD, REDUCE_GRAD, SEND_F, RECV_F, "
                    "SEND_B, RECV_B)",
                    kind_name));
    return false;
  }
  if (!std::isfinite(value) || value < 0) {
    fail(fmt::format("time_us must be a finite number >= 0, got {}", value));
    return false;
  }
  model.per_stage[static_cast<std::size_t>(stage)][static_cast<std::size_t>(*kind)] = value;
  if (given) given->add(static_cast<std::uint32_t>(stage), *kind);
  return true;
}

// The place of a (stage, kind) row, to report a second row for it: which one was meant would be
// a guess (a table concatenated from two runs, a copy-paste), so it is an error, not last-wins.
class SeenRows {
 public:
  /// The place of the earlier row for (stage, kind), or nullopt (then this one is recorded).
  std::optional<std::string> seen(std::int64_t stage, std::string_view kind, std::string place) {
    auto k = cost_kind(kind);
    if (!k || stage < 0) return std::nullopt;  // set_cost reports it
    auto [it, inserted] = first_.emplace(std::pair{stage, static_cast<int>(*k)}, std::move(place));
    if (inserted) return std::nullopt;
    return it->second;
  }

 private:
  std::map<std::pair<std::int64_t, int>, std::string> first_;
};

std::string twice(std::int64_t stage, std::string_view kind, const std::string& first) {
  return fmt::format("stage {} has a second {} time (the first is {}); give each (stage, kind) once", stage, kind,
                     first);
}

bool read_csv_costs(const std::string& path, std::string_view text, CostModel& model, CostCoverage* given,
                    DiagnosticSink& sink) {
  const std::string& name = path;  // already the display name
  try {
    io::CSVReader<3, io::trim_chars<' ', '\t'>, io::double_quote_escape<',', '"'>> in(name, text.data(),
                                                                                      text.data() + text.size());
    in.read_header(io::ignore_extra_column, "stage", "kind", "time_us");
    std::string stage_text, kind, time_text;
    bool ok = true;
    SeenRows rows;
    while (in.read_row(stage_text, kind, time_text)) {
      auto line = static_cast<std::uint32_t>(in.get_file_line());
      auto fail = [&](std::string msg) { sink.report(cost_error(name, line, {}, std::move(msg))); };
      char* end = nullptr;
      long long stage = std::strtoll(stage_text.c_str(), &end, 10);
      if (stage_text.empty() || *end != '\0') {
        fail(fmt::format("stage '{}' is not an integer", stage_text));
        ok = false;
        continue;
      }
      auto value = parse_cost_value(time_text);
      if (!value) {
        fail(fmt::format("time_us '{}' must be a finite number >= 0", time_text));
        ok = false;
        continue;
      }
      if (auto first = rows.seen(stage, kind, fmt::format("on line {}", line))) {
        fail(twice(stage, kind, *first));
        ok = false;
        continue;
      }
      ok &= set_cost(model, given, stage, kind, *value, fail);
    }
    return ok;
  } catch (const io::error::base& e) {
    sink.report(cost_error(name, 0, {}, e.what()));
    return false;
  }
}

constexpr std::array<std::string_view, 2> kTableKeys{"schema_version", "costs"};
constexpr std::array<std::string_view, 3> kRowKeys{"stage", "kind", "time_us"};

bool read_json_costs(const std::string& path, std::string_view text, CostModel& model, CostCoverage* given,
                     DiagnosticSink& sink) {
  JsonInput f(path, text, "cost-file", sink);  // path is already the display name
  nlohmann::json doc;
  if (!f.load(doc) || !f.known_keys(doc, "$", kTableKeys)) return false;
  if (!doc.contains("costs") || !doc["costs"].is_array()) {
    f.error(doc.contains("costs") ? "$.costs" : "$",
            "a cost table is an object with \"schema_version\": 1 and \"costs\": [{\"stage\", \"kind\", \"time_us\"}, "
            "...]");
    return false;
  }
  bool ok = true;
  SeenRows rows;
  const auto& costs = doc["costs"];
  for (std::size_t i = 0; i < costs.size(); ++i) {
    std::string at = fmt::format("$.costs[{}]", i);
    const auto& c = costs[i];
    if (!c.is_object() || !c.contains("stage") || !c["stage"].is_number_integer() || !c.contains("kind") ||
        !c["kind"].is_string() || !c.contains("time_us") || !c["time_us"].is_number()) {
      f.error(at, "each cost needs an integer \"stage\", a string \"kind\" and a number \"time_us\"");
      ok = false;
      continue;
    }
    if (!f.known_keys(c, at, kRowKeys)) {
      ok = false;
      continue;
    }
    const auto stage = c["stage"].get<std::int64_t>();
    const auto kind = c["kind"].get<std::string>();
    if (auto first = rows.seen(stage, kind, at)) {
      f.error(at, twice(stage, kind, *first));
      ok = false;
      continue;
    }
    ok &= set_cost(model, given, stage, kind, c["time_us"].get<double>(),
                   [&](std::string msg) { f.error(at, std::move(msg)); });
  }
  return ok;
}

}  // namespace

bool read_cost_file(const std::string& path, CostModel& model, DiagnosticSink& sink, CostCoverage* given) {
  std::string text;
  try {
    text = read_whole_input(path, std::size_t{1} << 30);
  } catch (const IoError& e) {
    sink.report(io_diagnostic(e));
    return false;
  }
  return read_cost_text(display_name(path), text, model, sink, given);
}

bool read_cost_text(std::string_view name, const std::string& text, CostModel& model, DiagnosticSink& sink,
                    CostCoverage* given) {
  // A UTF-8 byte order mark is skipped by both readers (nlohmann skips it itself, and keeps the
  // columns of the first line counted from the file's first byte).
  std::string_view body = text;
  if (body.starts_with("\xEF\xBB\xBF")) body.remove_prefix(3);
  auto first = body.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && body[first] == '{')
    return read_json_costs(std::string(name), text, model, given, sink);
  return read_csv_costs(std::string(name), body, model, given, sink);
}

bool check_cost_coverage(std::string_view name, const CostCoverage& given, const CostNeeds& needs, bool fill,
                         DiagnosticSink& sink) {
  const std::optional<MissingCost> first = first_missing_cost(needs.kinds, given);
  if (!first) return true;
  Diagnostic d = cost_error(std::string(name), 0, {}, {});
  const std::string where = first->kind ? fmt::format("{} of stage {}", kind_name(*first->kind), first->stage)
                                        : fmt::format("all of stage {}", first->stage);
  const char* runs = needs.of_one_schedule ? "the schedule runs" : "the schedules tried may run";
  if (fill) {
    const std::size_t n = count_missing_costs(needs.kinds, given);
    d.severity = Severity::Warning;
    d.message = fmt::format(
        "--fill unit: the cost table leaves out {} (stage, kind) time{} that {} (the first: {}); "
        "{} {}",
        n, n == 1 ? "" : "s", runs, where, n == 1 ? "it takes" : "they take", needs.filled_with);
    sink.report(std::move(d));
    return true;
  }
  const auto stages = needs.kinds.size();
  if (first->kind)
    d.message = fmt::format("the cost table gives stage {} no time for {}, which {} there", first->stage,
                            kind_name(*first->kind), runs);
  else
    d.message =
        fmt::format("the cost table gives no costs for stage {}; the {} has {} stage{} (0-{})", first->stage,
                    needs.of_one_schedule ? "schedule" : "pipeline", stages, stages == 1 ? "" : "s", stages - 1);
  Note way_out;
  way_out.message = fmt::format("add the missing rows, or pass --fill unit to take {} for what the table leaves out",
                                needs.filled_with);
  d.notes.push_back(std::move(way_out));
  sink.report(std::move(d));
  return false;
}

void write_cost_table(std::span<const CostRow> rows, ByteSink& out) { out.write(cost_table_csv(rows)); }

std::string cost_table_csv(std::span<const CostRow> rows) {
  std::string out = "stage,kind,time_us\n";
  for (const CostRow& r : rows) out += fmt::format("{},{},{:.3f}\n", r.stage, kind_name(r.kind), r.time_us);
  return out;
}

}  // namespace ppsched
