// The cost table and the cost shorthand: the text forms of a CostModel (model/costs.hpp).
//
//   - the shorthand `F=1,B=2,I=1,W=1` (--cost): per-rank costs, any subset of kinds, B = I + W
//     when not given;
//   - the cost table (--costs FILE): per stage and kind, CSV with a header `stage,kind,time_us`
//     (what `ppsched run --cost-out` writes) or JSON `{"schema_version": 1, "costs": [{"stage": 0,
//     "kind": "F", "time_us": 12.5}, ...]}`, chosen by the first non-blank byte. Rows override
//     what the model held; stages or kinds the table leaves out keep their value, and the
//     reader records which it gave (CostCoverage) so that check_cost_coverage can refuse a table
//     that does not price what the schedule runs.
//
// Every problem in a table is reported with file:line (CSV) or the JSON path, rule id cost-file.
//
// Writing gives the CSV form of a list of rows (what `ppsched run --cost-out` measured), which
// reads back as it was written, to three decimals:
//   stage,kind,time_us
//   0,F,812.250
//   0,I,790.004
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "diag/diagnostic.hpp"
#include "io/byte_sink.hpp"
#include "model/cost_coverage.hpp"
#include "model/costs.hpp"

namespace ppsched {

/// Parses "F=1,B=2,I=1,W=1" (any subset, any order; also UNSHARD, RESHARD, REDUCE_GRAD,
/// SEND_F, ...). Values are finite and >= 0. B, when not given, is I + W. On failure returns
/// nullopt and sets `error` to a message naming the bad item.
std::optional<KindCosts> parse_cost_shorthand(std::string_view text, std::string& error);

/// Reads a cost table (CSV or JSON, chosen by the first non-blank byte; "-" for standard input)
/// into `model`, which must already have its stages. Every problem is reported with file:line
/// (CSV) or the JSON path; returns false on any error. `given`, when not null, receives each
/// (stage, kind) the table has a row for.
bool read_cost_file(const std::string& path, CostModel& model, DiagnosticSink& sink, CostCoverage* given = nullptr);
/// The same on text in memory, reported as file `name`.
bool read_cost_text(std::string_view name, const std::string& text, CostModel& model, DiagnosticSink& sink,
                    CostCoverage* given = nullptr);

/// What check_cost_coverage compares a table with, and what to say about it.
struct CostNeeds {
  std::vector<KindSet> kinds;  ///< per stage, the compute kinds that must have a time
  /// The kinds are one schedule's (compute_kinds_by_stage), not every_compute_kind for the
  /// schedules a search or tune may try.
  bool of_one_schedule = true;
  /// What the gaps take with --fill unit, e.g. "the unit costs".
  std::string filled_with;
};

/// Whether the table `name` (what `given` says it priced) has a time for every compute kind
/// each stage runs. A gap is an error naming the first missing stage, or stage and kind, with a
/// note on the way out:
///   costs.csv: error: the cost table gives no costs for stage 8; the schedule has 16 stages (0-15) [cost-file]
///   note: add the missing rows, or pass --fill unit to take the unit costs for what the table leaves out
/// With `fill` it is a warning saying how many (stage, kind) take the pre-filled values.
/// Returns false on an error.
bool check_cost_coverage(std::string_view name, const CostCoverage& given, const CostNeeds& needs, bool fill,
                         DiagnosticSink& sink);

/// Writes `rows`, in their order, as a CSV cost table: the header `stage,kind,time_us`, then one
/// line per row with the time to three decimals, LF line endings.
void write_cost_table(std::span<const CostRow> rows, ByteSink& out);
/// The same, as a string.
std::string cost_table_csv(std::span<const CostRow> rows);

}  // namespace ppsched
