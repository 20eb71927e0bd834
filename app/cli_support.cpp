#include "cli_support.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>

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
CLI::Validator finite_number(bool zero_allowed) {
  const std::string want = zero_allowed ? "a finite number >= 0" : "a finite number > 0";
  return CLI::Validator(
      [zero_allowed, want](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v) || !std::isfinite(v) || v < 0 || (v == 0 && !zero_allowed))
          return "expected " + want + ", got '" + text + "'";
        return {};
      },
      zero_allowed ? "NUMBER >= 0" : "NUMBER > 0");
}
}  // namespace

CLI::Validator finite_positive() { return finite_number(false); }
CLI::Validator finite_non_negative() { return finite_number(true); }
CLI::Validator finite_in(double lo, double hi) {
  const std::string want = fmt::format("a number from {} to {}", lo, hi);
  return CLI::Validator(
      [lo, hi, want](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v) || !(v >= lo && v <= hi)) return "expected " + want + ", got '" + text + "'";
        return {};
      },
      fmt::format("NUMBER in [{}, {}]", lo, hi));
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
