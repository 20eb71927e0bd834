// ppsched's own JSON schedule format (docs/formats.md), read with nlohmann-json and written by
// a streaming writer (a DOM of 10M strings would cost gigabytes). It carries what a CSV file
// cannot: the stage and microbatch counts and the placement. Actions are strings in PyTorch's
// text form, so a CSV file converts to JSON and back byte for byte.
//
//   {"schema_version": 1, "kind": "ppsched-schedule", "ranks": 2, "stages": 2,
//    "microbatches": 2, "placement": {"style": "loop"},
//    "programs": [["0F0", "0F1", null, "0B0", "0B1"], ["1F0", "1B0", "1F1", "1B1"]]}
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "diag/diagnostic.hpp"
#include "io/byte_sink.hpp"
#include "ir/schedule.hpp"
#include "parse/pytorch_csv.hpp"

namespace ppsched {

inline constexpr int kScheduleSchemaVersion = 1;

struct JsonReadOptions {
  bool lenient = false;  ///< accept non-canonical action strings, as the CSV reader does
};

std::optional<ParsedSchedule> read_json_schedule(const std::string& path, const JsonReadOptions& opt,
                                                 DiagnosticSink& sink);
std::optional<ParsedSchedule> read_json_schedule_text(std::string_view name, std::string_view text,
                                                      const JsonReadOptions& opt, DiagnosticSink& sink);

void write_json_schedule(const Schedule& s, ByteSink& out);
std::string to_json_schedule(const Schedule& s);

}  // namespace ppsched
