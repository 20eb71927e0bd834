// Where a command's schedule comes from: a file (PyTorch CSV or ppsched JSON) or a family to
// synthesize, then an optional lowering. Shared by compile and simulate (and later commands),
// so the flags mean the same everywhere.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/schedule.hpp"
#include "passes/passes.hpp"
#include "sim_inputs.hpp"

namespace CLI {
class App;
}

namespace ppsched::cli {

struct SourceOptions {
  std::string input;     ///< a file, or "-"; exclusive with schedule
  std::string schedule;  ///< a family name
  std::uint32_t ranks = 0, microbatches = 0, stages_per_rank = 0;
  bool pytorch_compat = false;
  std::string input_format = "auto";
  bool lenient = false;
  std::string dialect = "current";  ///< --dialect: current or pre-2.6
  std::string lower = "none";
  /// PyTorch's runtime lowering keywords (--lower runtime, and simulate's runtime lowering).
  bool defer_pp_recv = false;
  std::string max_active_stages;       ///< "" (PyTorch's default, 3), an integer, or "none"
  std::string pytorch_commit = "new";  ///< "old" (00722e64) or "new" (cff2ecc8)
  /// A synthesis whose schedule would hold more than this (GiB, estimated up front) is refused.
  double max_schedule_gib = 4;
  /// For --schedule auto: the memory cap (0: none), the search's time budget, and the costs
  /// (null: unit costs) the command was given.
  double memory_cap = 0;
  double time_budget_s = 1.0;
  const SimInputOptions* sim_inputs = nullptr;
  /// The command will lower a synthesized schedule to run it (simulate under --runtime pytorch):
  /// the size budget counts its comms.
  bool will_lower = false;
};

/// Refuses (prints why and returns false) a synthesis of `ranks` x `stages_per_rank` stages and
/// `microbatches` microbatches whose schedule would exceed `max_gib`, estimated as three compute
/// actions per stage and microbatch (F, I, W), three times that when lowered with comms, at 8
/// bytes each. `flag` names what raises the limit.
bool within_size_budget(std::uint64_t ranks, std::uint64_t stages_per_rank, std::uint64_t microbatches, bool lowered,
                        double max_gib, const char* flag);

/// Adds FILE, --schedule, --ranks, --microbatches, --stages-per-rank, --pytorch-compat,
/// Adds --dialect current|pre-2.6: which PyTorch's action names a CSV file uses.
void add_dialect_option(CLI::App& sub, std::string& dialect);

/// --input-format, --lenient and --lower to a subcommand.
void add_source_options(CLI::App& sub, SourceOptions& opt);

/// Applies a lowering recipe ("none", "send-recv", "runtime"). Where PyTorch's passes reject the
/// schedule, prints their verdict, prefixed with `why` (what asked for the lowering), with the
/// step grid and the stuck ranks, and returns nullopt: bad input, not an internal error.
std::optional<Schedule> lower_schedule(const Schedule& s, const std::string& recipe, const std::string& why,
                                       const RuntimeLowering& runtime = {});

/// The runtime lowering keywords the options ask for, or nullopt after saying why they cannot
/// be had: the chosen PyTorch (--pytorch-commit old) or schedule class (GPipe, 1F1B) lacks them,
/// as PyTorch's constructor would say, or nothing lowers with them.
std::optional<RuntimeLowering> runtime_lowering(const SourceOptions& opt, bool runtime_lowers);

/// Runs validate's structural rules on the schedule as given (before lowering; `source` locates a
/// file's actions). On an error prints it with the count and the way out and returns true (the
/// caller refuses the input), unless `force`: then a warning, and false.
bool refuse_invalid_schedule(const SourceOptions& opt, bool force, const Schedule& as_given, const SourceMap& source);

/// What the chosen runtime executes of `s` (sim/runtime.hpp): lowered with PyTorch's runtime
/// recipe under --runtime pytorch when it is compute-only. Refuses --blocking-comms on a schedule
/// that has no SEND/RECV to block on. Prints the problem and returns nullopt.
std::optional<Schedule> schedule_for_runtime(Schedule s, const SimInputOptions& opt,
                                             const RuntimeLowering& lowering = {});

/// The schedule before lowering, and where a file's actions are (empty for a synthesis).
struct AsGiven {
  Schedule schedule;
  SourceMap source;
  /// False: without a lowering, `schedule` is left empty, since the schedule load_schedule
  /// returns is the one as given (no copy of a schedule of millions of actions).
  bool copy_unlowered = true;
};

/// Reads or synthesizes, then lowers; prints every problem and returns nullopt on failure.
/// `as_given`, when not null, receives the schedule before lowering (what `validate` would check).
std::optional<Schedule> load_schedule(const SourceOptions& opt, AsGiven* as_given = nullptr);

}  // namespace ppsched::cli
