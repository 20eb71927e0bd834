#include "parse/json_schedule.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iterator>

#include "diag/suggest.hpp"
#include "io/input_file.hpp"
#include "ir/action_text.hpp"
#include "parse/cell_diagnostics.hpp"
#include "parse/io_diagnostic.hpp"
#include "parse/json_input.hpp"
#include "parse/json_locate.hpp"

namespace ppsched {

namespace {

using nlohmann::json;

// A char iterator that tells, through `*at`, how far the parser has read. nlohmann-json's SAX
// events carry no position; with this, each action string gets its place in the text at no
// cost (the lexer has read a string's closing quote, and no further, when it reports it).
class CountingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  CountingIterator(const char* p, const char** at) : p_(p), at_(at) {}
  reference operator*() const { return *p_; }
  CountingIterator& operator++() {
    *at_ = ++p_;
    return *this;
  }
  CountingIterator operator++(int) {
    CountingIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const CountingIterator& o) const { return p_ == o.p_; }
  bool operator!=(const CountingIterator& o) const { return p_ != o.p_; }

 private:
  const char* p_;
  const char** at_;
};

// Line and column of increasing offsets, counted forwards from the last one asked: the cells'
// diagnostics of a large lenient file cost one pass over the text, not one per diagnostic.
class LineCursor {
 public:
  explicit LineCursor(std::string_view text) : text_(text) {}
  std::pair<std::uint32_t, std::uint32_t> at(std::size_t offset) {
    offset = std::min(offset, text_.size());
    if (offset < pos_) pos_ = 0, line_ = 1, line_start_ = 0;  // not expected; stays correct
    for (; pos_ < offset; ++pos_)
      if (text_[pos_] == '\n') ++line_, line_start_ = pos_ + 1;
    return {line_, static_cast<std::uint32_t>(offset - line_start_ + 1)};
  }
  std::size_t line_start() const { return line_start_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0, line_start_ = 0;
  std::uint32_t line_ = 1;
};

// What a JSON schedule holds, read from the parser's events: `programs` goes straight into the
// schedule's rank programs, one Action per cell, with no DOM value per action (a DOM costs some
// 17 bytes of memory per byte of text); every other top-level key is kept as a small DOM for the
// checks that follow. The cells' problems wait in `pending` until those checks have passed, so a
// file of another schema_version or a syntax error is not reported cell by cell.
class ScheduleEvents {
 public:
  static constexpr std::size_t kMaxPendingErrors = 50;  // DiagnosticSink's default

  ScheduleEvents(std::string_view name, std::string_view text, const char* const* at, bool lenient, Schedule& s)
      : name_(name), text_(text), at_(at), lenient_(lenient), s_(s), cursor_(text) {}

  json header = json::object();  ///< every top-level key but "programs"
  std::string root_type;         ///< set when the document is not an object
  std::string programs_type;     ///< "array" when "programs" is one
  bool duplicate_key = false;
  bool too_many_ranks = false;
  std::vector<Diagnostic> pending;
  std::vector<std::string> pending_paths;  ///< for diagnostics located after the parse ("" when done)
  // A syntax error: where the parser stopped, and its exception.
  bool syntax_error = false;
  std::size_t error_byte = 0;
  std::string error_token;
  std::optional<nlohmann::json::parse_error> parse_error_;
  std::optional<nlohmann::json::out_of_range> range_error_;

  bool null() { return scalar(nullptr, Cell::Null); }
  bool boolean(bool v) { return scalar(v, Cell::Other); }
  bool number_integer(json::number_integer_t v) { return scalar(v, Cell::Other); }
  bool number_unsigned(json::number_unsigned_t v) { return scalar(v, Cell::Other); }
  bool number_float(json::number_float_t v, const json::string_t&) { return scalar(v, Cell::Other); }
  bool binary(json::binary_t&) { return scalar(nullptr, Cell::Other); }  // not in JSON text
  bool string(json::string_t& v) {
    if (state_ == State::Rank && !skip_depth_) return cell_string(v);
    return scalar(v, Cell::Other);
  }
  bool start_object(std::size_t) { return open(true); }
  bool start_array(std::size_t) { return open(false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(json::string_t& k) {
    if (skip_depth_) return true;
    if (!dom_.empty()) {
      if (dom_.back()->contains(k)) duplicate_key = true;
      dom_key_ = k;
      return true;
    }
    // The root object.
    if (k == "programs" ? programs_seen_ : header.contains(k)) duplicate_key = true;
    programs_seen_ |= k == "programs";
    key_ = k;
    return true;
  }
  bool parse_error(std::size_t byte, const std::string& token, const nlohmann::json::exception& e) {
    syntax_error = true;
    error_byte = byte;
    error_token = token;
    if (e.id == 406)
      range_error_.emplace(static_cast<const nlohmann::json::out_of_range&>(e));
    else
      parse_error_.emplace(static_cast<const nlohmann::json::parse_error&>(e));
    return false;
  }

 private:
  enum class State { Root, Header, Programs, Rank };
  enum class Cell { Null, Other };

  // Depth 1 is inside the root object, 2 inside "programs", 3 inside one rank's program.
  bool open(bool object) {
    ++depth_;
    if (skip_depth_) return true;
    if (depth_ == 1) {
      if (!object) return root_type = "array", false;
      return true;
    }
    if (!dom_.empty() || (depth_ == 2 && key_ != "programs")) {
      json* v = add(object ? json::object() : json::array());
      dom_.push_back(v);
      return true;
    }
    if (depth_ == 2) {  // the value of "programs"
      programs_type = object ? "object" : "array";
      if (object)
        skip_depth_ = depth_;
      else
        state_ = State::Programs;
      return true;
    }
    if (depth_ == 3) {  // one rank's program
      if (s_.ranks.size() >= kMaxCsvRanks) return too_many_ranks = true, false;
      s_.ranks.emplace_back();
      if (object) {
        problem(row_path(), "each rank's program must be an array of actions");
        skip_depth_ = depth_;
      } else {
        state_ = State::Rank;
      }
      return !full();
    }
    // depth 4: a container where an action belongs
    s_.ranks.back().actions.push_back(Action::idle());
    problem(cell_path(), "an action must be a string such as \"0F0\", or null for an idle step");
    skip_depth_ = depth_;
    return !full();
  }

  bool close() {
    if (skip_depth_) {
      if (depth_-- == skip_depth_) skip_depth_ = 0;
      return true;
    }
    --depth_;
    if (!dom_.empty()) {
      dom_.pop_back();
      return true;
    }
    if (state_ == State::Rank)
      state_ = State::Programs;
    else if (state_ == State::Programs)
      state_ = State::Root;
    return true;
  }

  template <typename T>
  bool scalar(T&& v, Cell kind) {
    if (skip_depth_) return true;
    if (depth_ == 0) return root_type = json(std::forward<T>(v)).type_name(), false;
    if (!dom_.empty() || (depth_ == 1 && key_ != "programs")) {
      add(json(std::forward<T>(v)));
      return true;
    }
    if (depth_ == 1) {  // "programs" is not an array
      programs_type = json(std::forward<T>(v)).type_name();
      return true;
    }
    if (depth_ == 2) {  // a rank that is not an array
      if (s_.ranks.size() >= kMaxCsvRanks) return too_many_ranks = true, false;
      s_.ranks.emplace_back();
      problem(row_path(), "each rank's program must be an array of actions");
      return !full();
    }
    s_.ranks.back().actions.push_back(Action::idle());
    if (kind == Cell::Null) return true;
    problem(cell_path(), "an action must be a string such as \"0F0\", or null for an idle step");
    return !full();
  }

  bool cell_string(const std::string& text) {
    auto& program = s_.ranks.back().actions;
    Action a;
    if (!text.empty() && parse_canonical_plain(text, a)) {
      program.push_back(a);
      return true;
    }
    CellParse parsed = parse_action_cell(text, lenient_, s_.sub_actions);
    program.push_back(parsed.accepted ? parsed.action : Action::idle());
    if (!parsed.issue) return true;
    // The string ends just before where the parser is; find its opening quote.
    std::size_t end = static_cast<std::size_t>(*at_ - text_.data());  // past the closing quote
    std::size_t open = end >= 2 ? end - 2 : 0;
    for (; open > 0; --open) {
      if (text_[open] != '"') continue;
      std::size_t slashes = 0;
      while (open > slashes && text_[open - 1 - slashes] == '\\') ++slashes;
      if (slashes % 2 == 0) break;
    }
    Diagnostic d = cell_diagnostic(parsed, lenient_, {std::string(name_), 0, 0, cell_path(program.size() - 1)}, {});
    // The caret goes on the problem inside the string: +1 for the opening quote (the action
    // text never needs escapes before the problem).
    std::size_t offset = open + 1 + parsed.issue->offset;
    auto [line, col] = cursor_.at(offset);
    d.loc.line = line;
    d.loc.column = col;
    d.snippet = make_snippet(json_line_at(text_, offset), col - 1, parsed.issue->length);
    if (d.severity == Severity::Error) ++pending_errors_;
    pending.push_back(std::move(d));
    pending_paths.emplace_back();
    return !full();
  }

  // A problem at a path, located after the parse (the only ones that need the path scan).
  void problem(std::string path, std::string message) {
    Diagnostic d;
    d.rule = "json-schema";
    d.loc = {std::string(name_), 0, 0, path};
    d.message = std::move(message);
    pending.push_back(std::move(d));
    pending_paths.push_back(std::move(path));
    ++pending_errors_;
  }

  bool full() const { return pending_errors_ >= kMaxPendingErrors; }
  std::string row_path() const { return fmt::format("$.programs[{}]", s_.ranks.size() - 1); }
  std::string cell_path(std::size_t i) const { return fmt::format("$.programs[{}][{}]", s_.ranks.size() - 1, i); }
  std::string cell_path() const { return cell_path(s_.ranks.back().actions.size() - 1); }

  json* add(json v) {
    if (dom_.empty()) {
      json& slot = header[key_];
      slot = std::move(v);
      return &slot;
    }
    json& parent = *dom_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    json& slot = parent[dom_key_];
    slot = std::move(v);
    return &slot;
  }

  std::string_view name_, text_;
  const char* const* at_;
  bool lenient_;
  Schedule& s_;
  LineCursor cursor_;
  State state_ = State::Root;
  std::size_t depth_ = 0, skip_depth_ = 0, pending_errors_ = 0;
  bool programs_seen_ = false;
  std::string key_, dom_key_;
  std::vector<json*> dom_;
};

class JsonScheduleReader {
 public:
  JsonScheduleReader(std::string name, const JsonReadOptions& opt, DiagnosticSink& sink)
      : name_(std::move(name)), opt_(opt), sink_(sink) {}

  std::optional<ParsedSchedule> run(std::string_view text) {
    text_ = text;
    const char* at = text.data();
    ScheduleEvents events(name_, text, &at, opt_.lenient, out_.schedule);
    CountingIterator first(text.data(), &at), last(text.data() + text.size(), &at);
    json::sax_parse(first, last, &events);  // skips a UTF-8 byte order mark
    if (events.syntax_error) {
      if (events.range_error_)
        sink_.report(json_syntax_diagnostic(name_, text, *events.range_error_, events.error_byte, events.error_token,
                                            "json-syntax"));
      else
        sink_.report(json_syntax_diagnostic(name_, text, *events.parse_error_, events.error_byte, events.error_token,
                                            "json-syntax"));
      return std::nullopt;
    }
    if (!events.root_type.empty()) {
      error("$", "a schedule must be a JSON object, got " + events.root_type);
      return std::nullopt;
    }
    if (events.duplicate_key && !check_duplicate_keys(name_, text, "json-schema", sink_)) return std::nullopt;
    if (!read_header(events) || sink_.has_errors()) return std::nullopt;
    for (std::size_t i = 0; i < events.pending.size(); ++i) {
      Diagnostic& d = events.pending[i];
      if (!events.pending_paths[i].empty()) locate(d);
      sink_.report(std::move(d));
    }
    if (sink_.has_errors()) return std::nullopt;
    out_.source.file = name_;
    if (!read_placement(events.header) || sink_.has_errors()) return std::nullopt;
    return std::move(out_);
  }

 private:
  // Where the value at `path` starts: line, column and a snippet of its line.
  void locate(Diagnostic& d, std::size_t caret_in_value = 0, std::size_t length = 1) {
    auto at = locate_json_path(text_, d.loc.path);
    if (!at) return;
    std::size_t offset = *at + caret_in_value;
    auto [line, col] = json_line_col(text_, offset);
    d.loc.line = line;
    d.loc.column = col;
    d.snippet = make_snippet(json_line_at(text_, offset), col - 1, length);
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

  bool read_header(const ScheduleEvents& events) {
    const json& doc = events.header;
    static constexpr std::string_view kKeys[] = {"schema_version", "kind",      "ranks",   "stages",
                                                 "microbatches",   "placement", "programs"};
    bool keys_ok = true;
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      if (std::find(std::begin(kKeys), std::end(kKeys), it.key()) != std::end(kKeys)) continue;
      error("$." + it.key(), unknown_key_message(it.key(), kKeys));
      keys_ok = false;
    }
    if (!keys_ok) return false;
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
    if (events.programs_type != "array") {
      error("$.programs", "missing 'programs': an array with one array of actions per rank" +
                              (events.programs_type.empty() ? std::string() : ", got " + events.programs_type));
      return false;
    }
    Schedule& s = out_.schedule;
    if (events.too_many_ranks) {
      error("$.programs", fmt::format("more than {} ranks: ppsched supports at most {}", kMaxCsvRanks, kMaxCsvRanks));
      return false;
    }
    auto ranks = count(doc, "ranks", kMaxCsvRanks);
    if (ranks && *ranks != s.ranks.size()) {
      error("$.ranks", fmt::format("'ranks' is {} but 'programs' has {} row(s)", *ranks, s.ranks.size()));
      return false;
    }
    s.num_stages = count(doc, "stages", Action::kMaxStage + 1u).value_or(0);
    s.num_microbatches = count(doc, "microbatches", Action::kMaxMicrobatch + 1u).value_or(0);
    return !sink_.has_errors();
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
