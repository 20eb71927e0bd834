// Reads a schedule from any supported format, choosing the reader from the file.
//
// Auto-detection: a name ending in ".json", or content whose first non-blank byte is '{',
// is JSON; anything else is PyTorch CSV.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "parse/json_schedule.hpp"
#include "parse/pytorch_csv.hpp"

namespace ppsched {

enum class ScheduleFormat { Auto, Csv, Json };

std::optional<ScheduleFormat> schedule_format_from_name(std::string_view name);  // auto|csv|json

struct ScheduleReadOptions {
  ScheduleFormat format = ScheduleFormat::Auto;
  bool lenient = false;
  ActionDialect dialect = ActionDialect::Current;  ///< CSV only: ppsched's JSON has today's names
};

/// Reads `path` ("-" for standard input). Problems go to `sink`; nullopt if any is an error.
std::optional<ParsedSchedule> read_schedule(const std::string& path, const ScheduleReadOptions& opt,
                                            DiagnosticSink& sink);

}  // namespace ppsched
