#include "cli_support.hpp"

#include "sim_inputs.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>

#include "diag/render.hpp"
#include "io/log_text.hpp"
#include "io/output_file.hpp"

namespace ppsched::cli {

namespace {
bool stderr_color() {
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  const char* term = std::getenv("TERM");
  if (term && std::string_view(term) == "dumb") return false;
  return ::isatty(STDERR_FILENO) == 1;
}
}  // namespace

namespace {
// A flag's number must parse and satisfy `ok`; the message says what was wanted and what came.
CLI::Validator number_check(const std::string& want, const std::string& shown_as, std::function<bool(double)> ok) {
  return CLI::Validator(
      [want, ok = std::move(ok)](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v) || !ok(v)) return "expected " + want + ", got '" + text + "'";
        return {};
      },
      shown_as);
}
}  // namespace

CLI::Validator finite_positive() {
  return number_check("a finite number > 0", "NUMBER > 0", [](double v) { return std::isfinite(v) && v > 0; });
}
CLI::Validator finite_non_negative() {
  return number_check("a finite number >= 0", "NUMBER >= 0", [](double v) { return std::isfinite(v) && v >= 0; });
}
CLI::Validator finite_in(double lo, double hi) {  // NaN fails both comparisons
  return number_check(fmt::format("a number from {} to {}", lo, hi), fmt::format("NUMBER in [{}, {}]", lo, hi),
                      [lo, hi](double v) { return v >= lo && v <= hi; });
}

CLI::Validator byte_suffixes(std::shared_ptr<bool> unit_given) {
  return CLI::Validator(
      [unit_given](std::string& text) -> std::string {
        if (unit_given) *unit_given = false;
        static const std::pair<const char*, double> kUnits[] = {
            {"kib", 1024.0}, {"mib", 1048576.0}, {"gib", 1073741824.0}, {"tib", 1099511627776.0},
            {"kb", 1e3},     {"mb", 1e6},        {"gb", 1e9},           {"tb", 1e12}};
        std::string lower;
        for (unsigned char c : text) lower += static_cast<char>(std::tolower(c));
        for (const auto& [suffix, factor] : kUnits) {
          const std::size_t n = std::strlen(suffix);
          if (lower.size() <= n || lower.compare(lower.size() - n, n, suffix) != 0) continue;
          std::string number = text.substr(0, text.size() - n);
          while (!number.empty() && number.back() == ' ') number.pop_back();
          char* end = nullptr;
          const double v = std::strtod(number.c_str(), &end);
          if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(v))
            return "'" + text + "' is not a size: write a number, optionally with KiB, MiB, GiB, TiB, KB, MB, GB or TB";
          text = fmt::format("{:.17g}", v * factor);
          if (unit_given) *unit_given = true;
          return {};
        }
        return {};  // a plain number: the option's own check judges it
      },
      "NUMBER[GiB|GB|...]", "byte suffix");
}

namespace {

// "8slots", "8 microbatches": a count of PyTorch's activation slots at a granularity. Returns the
// granularity and leaves the number in `text`, or nullopt when `text` has no such suffix.
std::optional<LivenessGranularity> activation_unit(std::string& text) {
  static const std::pair<const char*, LivenessGranularity> kUnits[] = {
      {"slots", LivenessGranularity::StageMicrobatch},
      {"slot", LivenessGranularity::StageMicrobatch},
      {"microbatches", LivenessGranularity::Microbatch},
      {"microbatch", LivenessGranularity::Microbatch}};
  std::string lower;
  for (unsigned char c : text) lower += static_cast<char>(std::tolower(c));
  for (const auto& [suffix, granularity] : kUnits) {
    const std::size_t n = std::strlen(suffix);
    if (lower.size() <= n || lower.compare(lower.size() - n, n, suffix) != 0) continue;
    std::string number = text.substr(0, text.size() - n);
    while (!number.empty() && number.back() == ' ') number.pop_back();
    text = number;
    return granularity;
  }
  return std::nullopt;
}

}  // namespace

CLI::Validator memory_cap_size(CLI::App& sub, const std::string& cap_option, MemoryModelOptions& memory_model) {
  auto unit_given = std::make_shared<bool>(false);
  auto activations = std::make_shared<std::optional<LivenessGranularity>>();
  sub.parse_complete_callback([&sub, &memory_model, cap_option, unit_given, activations] {
    const CLI::Option* cap = sub.get_option_no_throw(cap_option);
    if (!cap || cap->count() == 0) return;
    const CLI::Option* model_flag = sub.get_option_no_throw("--memory-model");
    const CLI::Option* granularity_flag = sub.get_option_no_throw("--liveness-granularity");
    if (*activations) {  // a count of activations: PyTorch's liveness at the unit's granularity
      const std::string unit(**activations == LivenessGranularity::Microbatch ? "microbatches" : "slots");
      const std::string granularity(liveness_granularity_name(**activations));
      if (model_flag && model_flag->count() > 0 && memory_model.model != "pytorch-liveness")
        throw CLI::ValidationError(cap_option, "a cap in " + unit + " counts PyTorch's activation liveness; it " +
                                                   "contradicts --memory-model " + memory_model.model);
      if (granularity_flag && granularity_flag->count() > 0 && memory_model.granularity != granularity)
        throw CLI::ValidationError(cap_option, "a cap in " + unit + " counts at --liveness-granularity " + granularity +
                                                   ", not " + memory_model.granularity);
      memory_model.model = "pytorch-liveness";
      memory_model.granularity = granularity;
      return;
    }
    const CLI::Option* model = sub.get_option_no_throw("--model");
    if (!model || model->count() == 0 || *unit_given) return;
    if (memory_model.liveness()) return;  // a plain number counts slots
    if (cap->as<double>() == 0) return;   // 0: no cap, in any unit
    throw CLI::ValidationError(cap_option, "with --model a rank's memory is in bytes: give " + cap_option +
                                               " a unit (80GiB, 75GB) or count activations (8slots, "
                                               "4microbatches); a plain number would be bytes");
  });
  const CLI::Validator bytes = byte_suffixes(unit_given);
  return CLI::Validator(
      [bytes, activations](std::string& text) -> std::string {
        *activations = activation_unit(text);
        if (*activations) {
          char* end = nullptr;
          const double v = std::strtod(text.c_str(), &end);
          if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
            return "'" + text + "' is not a count: write 8slots or 4microbatches";
          return {};
        }
        return bytes(text);
      },
      "NUMBER[GiB|GB|...|slots|microbatches]", "memory cap");
}

namespace {
ErrorLog* error_log = nullptr;  // the live ErrorLog, if any
}  // namespace

ErrorLog::ErrorLog() { error_log = this; }
ErrorLog::~ErrorLog() { error_log = nullptr; }

void print_diagnostics(const DiagnosticSink& sink) {
  std::string text = render_text(sink, RenderOptions{stderr_color()});
  std::fwrite(text.data(), 1, text.size(), stderr);
  if (error_log && sink.error_count() > 0) {
    std::string plain = render_text(sink, RenderOptions{false});
    while (!plain.empty() && plain.back() == '\n') plain.pop_back();
    error_log->messages_.push_back(std::move(plain));
  }
}

namespace {
// A message can quote a file name, a cell or a key: it goes out through the log guard.
void print_line(std::FILE* to, std::string_view prefix, const std::string& message) {
  const std::string text = guarded(std::string(prefix) + message + "\n");
  std::fwrite(text.data(), 1, text.size(), to);
}
}  // namespace

void print_error(const std::string& message) {
  print_line(stderr, "ppsched: error: ", message);
  if (error_log) error_log->messages_.push_back(message);
}

void print_warning(const std::string& message) { print_line(stderr, "ppsched: warning: ", message); }

void print_note(const std::string& message) { print_line(stderr, "ppsched: note: ", message); }

void print_stdout(std::string_view text) {
  const std::string safe = guarded(text);
  std::fwrite(safe.data(), 1, safe.size(), stdout);
}

void print_annotations(std::string_view text) { std::fwrite(text.data(), 1, text.size(), stdout); }

namespace {
char g_doing[512];
}  // namespace

void set_doing(std::string_view what) {
  const std::size_t n = std::min(what.size(), sizeof g_doing - 1);
  std::memcpy(g_doing, what.data(), n);
  g_doing[n] = '\0';
}

const char* doing() { return g_doing; }

void write_output(const std::string& path, const std::function<void(ByteSink&)>& produce) {
  set_doing("writing " + (path == "-" ? std::string("standard output") : path));
  OutputFile out(path);
  produce(out);
  out.commit();
}

void write_outputs_together(const std::vector<std::pair<std::string, std::function<void(ByteSink&)>>>& outputs) {
  std::vector<std::unique_ptr<OutputFile>> files;
  std::vector<OutputFile*> set;
  for (const auto& [path, produce] : outputs) {
    files.push_back(std::make_unique<OutputFile>(path));
    produce(*files.back());
    set.push_back(files.back().get());
  }
  commit_together(set);
}

void append_step_summary(const std::string& markdown) {
  const char* path = std::getenv("GITHUB_STEP_SUMMARY");
  if (!path || !*path) return;
  std::FILE* f = std::fopen(path, "a");
  const bool ok = f && std::fwrite(markdown.data(), 1, markdown.size(), f) == markdown.size();
  if (f) std::fclose(f);
  if (!ok) print_warning(std::string("could not append the findings table to $GITHUB_STEP_SUMMARY (") + path + ")");
}

}  // namespace ppsched::cli
