// Where a command's schedule comes from: a file (PyTorch CSV or ppsched JSON) or a family to
// synthesize; then the library prepares it for what runs it (sim/prepare.hpp). Shared by
// compile, simulate and run (tune takes the lowering keywords only), so the flags mean the same
// everywhere.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "ir/schedule.hpp"
#include "passes/passes.hpp"
#include "sim/prepare.hpp"
#include "sim_inputs.hpp"

namespace CLI {
class App;
}

namespace ppsched::cli {

/// PyTorch's runtime lowering keywords as flags (--defer-pp-recv, --max-active-stages).
struct KeywordOptions {
  bool defer_pp_recv = false;
  std::string max_active_stages;  ///< "" (PyTorch's default, 3), an integer, or "none"
};

struct SourceOptions {
  std::string input;     ///< a file, or "-"; exclusive with schedule
  std::string schedule;  ///< a family name
  std::uint32_t ranks = 0, microbatches = 0, stages_per_rank = 0;
  bool pytorch_compat = false;
  std::string input_format = "auto";
  bool lenient = false;
  std::string dialect = "current";  ///< --dialect: current or pre-2.6
  std::string lower = "none";
  KeywordOptions keywords;             ///< for --lower runtime, and the pytorch runtime's lowering
  std::string pytorch_commit = "new";  ///< "old" (00722e64) or "new" (cff2ecc8)
  /// A synthesis whose schedule would hold more than this (GiB, estimated up front) is refused.
  double max_schedule_gib = 4;
  /// For --schedule auto: the memory cap (0: none), the search's time budget, and the costs
  /// (null: unit costs) the command was given.
  double memory_cap = 0;
  /// What the cap counts: nullopt, the byte model's peak; else PyTorch's activation slots at this
  /// granularity (--memory-model pytorch-liveness, or a cap spelled 8slots / 4microbatches).
  std::optional<LivenessGranularity> cap_liveness;
  double time_budget_s = 1.0;
  const SimInputOptions* sim_inputs = nullptr;
};

/// Refuses (prints why and returns false) a synthesis of `ranks` x `stages_per_rank` stages and
/// `microbatches` microbatches whose schedule would exceed `max_gib`, as estimate_schedule_size
/// (synth/size_estimate.hpp) counts it. `flag` names what raises the limit. compile, list and
/// tune all ask it.
bool within_size_budget(std::uint64_t ranks, std::uint64_t stages_per_rank, std::uint64_t microbatches, bool lowered,
                        double max_gib, const char* flag);

/// Adds --dialect current|pre-2.6: which PyTorch's action names a CSV file uses.
void add_dialect_option(CLI::App& sub, std::string& dialect);

/// Adds --defer-pp-recv and --max-active-stages.
void add_lowering_keyword_options(CLI::App& sub, KeywordOptions& opt);

/// The keywords the flags give (their values were checked as the flags were read).
LoweringKeywords lowering_keywords(const KeywordOptions& opt);

/// Adds FILE, --schedule, --ranks, --microbatches, --stages-per-rank, --pytorch-compat,
/// --input-format, --dialect, --lenient, --lower and its keywords, --pytorch-commit,
/// --max-schedule-gib and --time-budget to a subcommand.
void add_source_options(CLI::App& sub, SourceOptions& opt);

/// How the options prepare the schedule for `runner` (and `runtime`, under Runner::Runtime): the
/// library's Preparation (sim/prepare.hpp), its keywords checked. Nullopt after saying why PyTorch
/// would not take them.
std::optional<Preparation> preparation_for(const SourceOptions& opt, Runner runner, Runtime runtime = Runtime::PyTorch);

/// A schedule as read or synthesized, and where a file's actions are (empty for a synthesis).
struct GivenSchedule {
  Schedule schedule;
  SourceMap source;
  std::optional<InferredShape> shape;  ///< infer_shape(schedule), where the reader gathered it
};

/// Reads the file or synthesizes the family (a synthesis's size budget counts the lowering `how`
/// adds). Prints every problem and returns nullopt on failure.
std::optional<GivenSchedule> read_source(const SourceOptions& opt, const Preparation& how);

/// prepare_schedule, printing PyTorch's verdict with its grid and the stuck ranks where it
/// rejects the schedule (bad input, not an internal error) and returning nullopt.
std::optional<PreparedSchedule> prepare(GivenSchedule given, const Preparation& how);

/// preparation_for, read_source and prepare in turn.
std::optional<PreparedSchedule> load_schedule(const SourceOptions& opt, Runner runner = Runner::AsLowered,
                                              Runtime runtime = Runtime::PyTorch);

/// Runs validate's structural rules on the schedule as given (before lowering; its source map
/// locates a file's actions). On an error prints it with the count and the way out and returns true (the
/// caller refuses the input), unless `force`: then a warning, and false. When the rules' proof
/// finds it clean, `census` (if given) receives what the proof saw of every leaf.
bool refuse_invalid_schedule(const SourceOptions& opt, bool force, const GivenSchedule& as_given,
                             std::shared_ptr<const LeafCensus>* census = nullptr);

/// What refuse_invalid_schedule's census of `s` says where `s` leaves it to inference (its context
/// is the schedule's own): PyTorch's placement, the stage and the microbatch counts, without a
/// pass over the actions. Nullopt without a census, or when `s` states any of them.
struct InferredShapeOf {
  Placement placement;
  std::uint32_t stages = 0, microbatches = 0;
};
std::optional<InferredShapeOf> shape_from_census(const Schedule& s, const LeafCensus* census);

}  // namespace ppsched::cli
