#include "parse/json_schedule.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "io/input_file.hpp"
#include "ir/action_text.hpp"
#include "parse/cell_diagnostics.hpp"
#include "parse/io_diagnostic.hpp"
#include "parse/json_locate.hpp"

namespace ppsched {

namespace {

using nlohmann::json;

// 1-based line and column of a byte offset.
std::pair<std::uint32_t, std::uint32_t> line_col(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::uint32_t line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset; ++i)
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  return {line, static_cast<std::uint32_t>(offset - line_start + 1)};
}

std::string_view line_at(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t b = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  b = (b == std::string_view::npos || b >= offset) ? 0 : b + 1;
  std::size_t e = text.find('\n', offset);
  if (e == std::string_view::npos) e = text.size();
  return text.substr(b, e - b);
}

class JsonScheduleReader {
 public:
  JsonScheduleReader(std::string name, const JsonReadOptions& opt, DiagnosticSink& sink)
      : name_(std::move(name)), opt_(opt), sink_(sink) {}

  std::optional<ParsedSchedule> run(std::string_view text) {
    text_ = text;
    json doc;
    try {
      doc = json::parse(text.begin(), text.end());
    } catch (const json::parse_error& e) {
      // e.byte is 1-based: the byte after the last one read.
      std::size_t at = e.byte > 0 ? e.byte - 1 : 0;
      auto [line, col] = line_col(text, at);
      std::string what = e.what();
      auto cut = what.find(": ", what.find("column"));
      Diagnostic d;
      d.rule = "json-syntax";
      d.loc = {name_, line, col, {}};
      d.message = "invalid JSON: " + (cut == std::string::npos ? what : what.substr(cut + 2));
      std::string_view l = line_at(text, at);
      d.snippet = make_snippet(l, col - 1, 1);
      sink_.report(std::move(d));
      return std::nullopt;
    } catch (const json::exception& e) {
      // A number too large for a double ("1e999"): nlohmann reports no position, so point at the
      // first occurrence of the literal it names.
      std::string what = e.what();
      auto open = what.find('\''), close = what.rfind('\'');
      std::string literal = open != std::string::npos && close > open ? what.substr(open + 1, close - open - 1) : "";
      std::size_t at = literal.empty() ? std::string_view::npos : text.find(literal);
      Diagnostic d;
      d.rule = "json-syntax";
      d.loc.file = name_;
      if (at != std::string_view::npos) {
        auto [line, col] = line_col(text, at);
        d.loc.line = line;
        d.loc.column = col;
        d.snippet = make_snippet(line_at(text, at), col - 1, literal.size());
      }
      d.message = literal.empty() ? "invalid JSON: " + what
                                  : "invalid JSON: the number " + literal + " is too large for a double";
      sink_.report(std::move(d));
      return std::nullopt;
    }
    if (!read_doc(doc) || sink_.has_errors()) return std::nullopt;
    return std::move(out_);
  }

 private:
  // Where the value at `path` starts: line, column and a snippet of its line.
  void locate(Diagnostic& d, std::size_t caret_in_value = 0, std::size_t length = 1) {
    auto at = locate_json_path(text_, d.loc.path);
    if (!at) return;
    std::size_t offset = *at + caret_in_value;
    auto [line, col] = line_col(text_, offset);
    d.loc.line = line;
    d.loc.column = col;
    d.snippet = make_snippet(line_at(text_, offset), col - 1, length);
  }

  void error(std::string path, std::string message) {
    Diagnostic d;
    d.rule = "json-schema";
    d.loc = {name_, 0, 0, std::move(path)};
    d.message = std::move(message);
    locate(d);
    sink_.report(std::move(d));
  }

  std::optional<std::uint32_t> count(const json& doc, const char* key, std::uint32_t limit) {
    if (!doc.contains(key)) return std::nullopt;
    const json& v = doc[key];
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() > limit) {
      error(std::string("$.") + key, fmt::format("'{}' must be an integer from 0 to {}, got {}", key, limit, v.dump()));
      return std::nullopt;
    }
    return static_cast<std::uint32_t>(v.get<std::uint64_t>());
  }

  bool read_doc(const json& doc) {
    if (!doc.is_object()) {
      error("$", "a schedule must be a JSON object, got " + std::string(doc.type_name()));
      return false;
    }
    static constexpr const char* kKeys[] = {"schema_version", "kind",      "ranks",   "stages",
                                            "microbatches",   "placement", "programs"};
    for (auto it = doc.begin(); it != doc.end(); ++it)
      if (std::find_if(std::begin(kKeys), std::end(kKeys), [&](const char* k) { return it.key() == k; }) ==
          std::end(kKeys)) {
        Diagnostic d;
        d.severity = Severity::Warning;
        d.rule = "json-schema";
        d.loc = {name_, 0, 0, "$." + it.key()};
        d.message = "unknown key '" + it.key() + "' ignored";
        locate(d);
        sink_.report(std::move(d));
      }
    auto version = doc.find("schema_version");
    if (version == doc.end() || !version->is_number_integer()) {
      error("$.schema_version", fmt::format("missing or non-integer 'schema_version' (this ppsched "
                                            "reads version {})",
                                            kScheduleSchemaVersion));
      return false;
    }
    if (version->get<std::int64_t>() != kScheduleSchemaVersion) {
      error("$.schema_version", fmt::format("unsupported schema_version {} (this ppsched reads "
                                            "version {})",
                                            version->dump(), kScheduleSchemaVersion));
      return false;
    }
    if (auto kind = doc.find("kind"); kind != doc.end() && *kind != "ppsched-schedule") {
      error("$.kind", "'kind' must be \"ppsched-schedule\", got " + kind->dump());
      return false;
    }
    auto programs = doc.find("programs");
    if (programs == doc.end() || !programs->is_array()) {
      error("$.programs", "missing 'programs': an array with one array of actions per rank");
      return false;
    }
    if (programs->size() > kMaxCsvRanks) {
      error("$.programs", fmt::format("{} ranks: ppsched supports at most {}", programs->size(), kMaxCsvRanks));
      return false;
    }
    Schedule& s = out_.schedule;
    auto ranks = count(doc, "ranks", kMaxCsvRanks);
    if (ranks && *ranks != programs->size()) {
      error("$.ranks", fmt::format("'ranks' is {} but 'programs' has {} row(s)", *ranks, programs->size()));
      return false;
    }
    s.num_stages = count(doc, "stages", Action::kMaxStage + 1u).value_or(0);
    s.num_microbatches = count(doc, "microbatches", Action::kMaxMicrobatch + 1u).value_or(0);
    if (sink_.has_errors()) return false;

    out_.source.file = name_;
    for (std::size_t r = 0; r < programs->size(); ++r) {
      const json& row = (*programs)[r];
      auto& program = s.ranks.emplace_back().actions;
      if (!row.is_array()) {
        error(fmt::format("$.programs[{}]", r), "each rank's program must be an array of actions");
        continue;
      }
      program.reserve(row.size());
      for (std::size_t i = 0; i < row.size(); ++i) {
        const json& cell = row[i];
        if (cell.is_null()) {
          program.push_back(Action::idle());
          continue;
        }
        std::string path = fmt::format("$.programs[{}][{}]", r, i);
        if (!cell.is_string()) {
          error(path, "an action must be a string such as \"0F0\", or null for an idle step");
          program.push_back(Action::idle());
          continue;
        }
        const auto& text = cell.get_ref<const std::string&>();
        CellParse parsed = parse_action_cell(text, opt_.lenient, s.sub_actions);
        if (parsed.issue) {
          Diagnostic d = cell_diagnostic(parsed, opt_.lenient, {name_, 0, 0, path}, {});
          // The caret goes on the problem inside the string: +1 for the opening quote (the
          // action text never needs escapes before the problem).
          locate(d, parsed.issue->offset + 1, parsed.issue->length);
          if (d.snippet.text.empty()) d.snippet = make_snippet(text, parsed.issue->offset, parsed.issue->length);
          sink_.report(std::move(d));
        }
        program.push_back(parsed.accepted ? parsed.action : Action::idle());
        if (sink_.full()) return false;
      }
    }
    return read_placement(doc);
  }

  bool read_placement(const json& doc) {
    Schedule& s = out_.schedule;
    auto p = doc.find("placement");
    if (p == doc.end() || p->is_null()) return true;
    auto style_it = p->is_object() ? p->find("style") : p->end();
    if (!p->is_object() || style_it == p->end() || !style_it->is_string()) {
      error("$.placement",
            "'placement' must be an object with a 'style' of \"loop\", \"v\" or "
            "\"explicit\"");
      return false;
    }
    std::string style = style_it->get<std::string>();
    auto ranks = static_cast<std::uint32_t>(s.ranks.size());
    if (style == "explicit") {
      auto map = p->find("stage_to_rank");
      if (map == p->end() || !map->is_array()) {
        error("$.placement.stage_to_rank",
              "an explicit placement needs 'stage_to_rank', a list "
              "giving the rank of each stage");
        return false;
      }
      std::vector<std::uint32_t> stage_to_rank;
      for (std::size_t i = 0; i < map->size(); ++i) {
        const json& r = (*map)[i];
        if (!r.is_number_unsigned() || r.get<std::uint64_t>() >= ranks) {
          error(fmt::format("$.placement.stage_to_rank[{}]", i),
                ranks ? fmt::format("a rank from 0 to {} expected, got {}", ranks - 1, r.dump())
                      : std::string("a placement needs at least one rank in 'programs'"));
          return false;
        }
        stage_to_rank.push_back(static_cast<std::uint32_t>(r.get<std::uint64_t>()));
      }
      if (s.num_stages && stage_to_rank.size() != s.num_stages) {
        error("$.placement.stage_to_rank", fmt::format("{} entries for {} stages", stage_to_rank.size(), s.num_stages));
        return false;
      }
      if (stage_to_rank.size() > Action::kMaxStage + 1u) {
        error("$.placement.stage_to_rank", "more stages than ppsched's limit of 65535");
        return false;
      }
      if (s.num_stages == 0) s.num_stages = static_cast<std::uint32_t>(stage_to_rank.size());
      s.placement = Placement::explicit_map(std::move(stage_to_rank));
      return true;
    }
    if (style != "loop" && style != "v") {
      error("$.placement.style", "unknown placement style '" + style + "' (expected \"loop\", \"v\" or \"explicit\")");
      return false;
    }
    if (s.num_stages == 0 || ranks == 0) {
      error("$.placement", "a '" + style + "' placement needs 'stages' and at least one rank");
      return false;
    }
    if (style == "loop") {
      s.placement = Placement::loop(ranks, s.num_stages);
      return true;
    }
    auto v = Placement::v(ranks, s.num_stages);
    if (!v) {
      error("$.placement", fmt::format("a 'v' placement needs stages ({}) to be a multiple of "
                                       "ranks ({})",
                                       s.num_stages, ranks));
      return false;
    }
    s.placement = std::move(*v);
    return true;
  }

  std::string name_;
  std::string_view text_;
  const JsonReadOptions& opt_;
  DiagnosticSink& sink_;
  ParsedSchedule out_;
};

}  // namespace

std::optional<ParsedSchedule> read_json_schedule_text(std::string_view name, std::string_view text,
                                                      const JsonReadOptions& opt, DiagnosticSink& sink) {
  return JsonScheduleReader(std::string(name), opt, sink).run(text);
}

std::optional<ParsedSchedule> read_json_schedule(const std::string& path, const JsonReadOptions& opt,
                                                 DiagnosticSink& sink) {
  std::string text;
  try {
    text = read_whole_input(path);
  } catch (const IoError& e) {
    sink.report(io_diagnostic(e));
    return std::nullopt;
  }
  return read_json_schedule_text(display_name(path), text, opt, sink);
}

void write_json_schedule(const Schedule& s, ByteSink& out) {
  constexpr std::size_t kChunk = 1 << 20;
  std::string buf;
  buf += fmt::format(
      "{{\n  \"schema_version\": {},\n  \"kind\": \"ppsched-schedule\",\n"
      "  \"ranks\": {},\n",
      kScheduleSchemaVersion, s.ranks.size());
  if (s.num_stages) buf += fmt::format("  \"stages\": {},\n", s.num_stages);
  if (s.num_microbatches) buf += fmt::format("  \"microbatches\": {},\n", s.num_microbatches);
  switch (s.placement.style) {
    case PlacementStyle::Unspecified:
      break;
    case PlacementStyle::Loop:
      buf += "  \"placement\": {\"style\": \"loop\"},\n";
      break;
    case PlacementStyle::V:
      buf += "  \"placement\": {\"style\": \"v\"},\n";
      break;
    case PlacementStyle::Explicit:
      buf += fmt::format("  \"placement\": {{\"style\": \"explicit\", \"stage_to_rank\": [{}]}},\n",
                         fmt::join(s.placement.stage_to_rank, ", "));
      break;
  }
  buf += "  \"programs\": [";
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    buf += r ? ",\n    [" : "\n    [";
    const auto& actions = s.ranks[r].actions;
    for (std::size_t i = 0; i < actions.size(); ++i) {
      if (i) buf += ", ";
      if (actions[i].is_idle()) {
        buf += "null";
      } else {
        // Action text is ASCII letters, digits, '(', ')', ';' and '_': no JSON escaping needed.
        buf += '"';
        append_action_text(buf, actions[i], s.sub_actions);
        buf += '"';
      }
      if (buf.size() >= kChunk) {
        out.write(buf);
        buf.clear();
      }
    }
    buf += ']';
  }
  buf += s.ranks.empty() ? "]\n}\n" : "\n  ]\n}\n";
  out.write(buf);
}

std::string to_json_schedule(const Schedule& s) {
  std::string text;
  StringSink sink(text);
  write_json_schedule(s, sink);
  return text;
}

}  // namespace ppsched
