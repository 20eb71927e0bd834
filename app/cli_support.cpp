#include "cli_support.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string_view>
#include <utility>

#include "diag/render.hpp"
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

void print_diagnostics(const DiagnosticSink& sink) {
  std::string text = render_text(sink, RenderOptions{stderr_color()});
  std::fwrite(text.data(), 1, text.size(), stderr);
}

void print_error(const std::string& message) {
  std::fprintf(stderr, "ppsched: error: %s\n", message.c_str());
}

void print_warning(const std::string& message) {
  std::fprintf(stderr, "ppsched: warning: %s\n", message.c_str());
}

void print_note(const std::string& message) { std::fprintf(stderr, "ppsched: note: %s\n", message.c_str()); }

void write_output(const std::string& path, const std::function<void(ByteSink&)>& produce) {
  OutputFile out(path);
  produce(out);
  out.commit();
}

}  // namespace ppsched::cli
