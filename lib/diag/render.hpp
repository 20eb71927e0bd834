// Text rendering of diagnostics, the way compilers print them:
//
//   sched.csv:2:5: error: unknown action kind 'X' in '1X0' [action-syntax]
//   1F0,1X0,1B0
//       ^~~
//   note: an action is <stage><KIND>[<microbatch>], e.g. '2F0', '1SEND_B3', '0UNSHARD'
//
// The location prefix is file:line:col when known, file: otherwise; a JSON path, when there
// is one, starts the message ("s.json:4:7: error: $.programs[1][0]: ..."), so problem
// matchers that expect "file:line:col: error: message" read every line. Colour only when asked (the caller decides:
// terminal and NO_COLOR).
#pragma once

#include <string>

#include "diag/diagnostic.hpp"

namespace ppsched {

struct RenderOptions {
  bool color = false;
};

std::string render_text(const Diagnostic& d, const RenderOptions& opt = {});
/// Renders every diagnostic of the sink, then a line for errors that were dropped.
std::string render_text(const DiagnosticSink& sink, const RenderOptions& opt = {});

/// The first line of `d` without its severity, no newline, for quoting a finding inside another
/// message: "s.csv:3:7: 0F1 appears a second time [duplicate-action]".
std::string render_one_line(const Diagnostic& d);

}  // namespace ppsched
