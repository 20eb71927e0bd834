// Preparing a schedule for what will run it: the one place that decides what runs of a schedule.
//
// A command first reads or synthesizes a schedule: the schedule as given, which validate checks
// and whose actions a source map locates in their file. prepare_schedule then applies, in order,
//   1. the lowering the user asked for (--lower: none, send-recv, runtime, merge-bw);
//   2. what the runner does to it before it runs: under a runtime model, schedule_as_run
//      (runtime.hpp: PyTorch's runtime lowers a compute-only schedule with its recipe and the
//      lowering keywords, Megatron drops SEND/RECV); under PyTorch's lock-step dry run, the
//      send/recv lowering a compute-only schedule needs to move data at all.
// simulate, tune, run and compile all prepare their schedules here, so a flag means the same in
// each; compile and run have no runner step (they write or execute the schedule as lowered).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ir/schedule.hpp"
#include "passes/passes.hpp"
#include "sim/runtime.hpp"

namespace ppsched {

/// The lowerings a user can ask for (--lower).
enum class Lowering : std::uint8_t { None, SendRecv, Runtime, MergeBw };
std::string_view lowering_name(Lowering l);  // "none", "send-recv", "runtime", "merge-bw"
std::optional<Lowering> lowering_from_name(std::string_view name);

/// What runs the prepared schedule, after the lowering step.
enum class Runner : std::uint8_t {
  AsLowered,  ///< nothing more: the schedule as lowered is written (compile) or executed (run)
  Runtime,    ///< a runtime model times it (Preparation::runtime)
  LockStep,   ///< PyTorch's lock-step dry run (simulate --simulator pytorch-steps)
};

/// PyTorch's runtime lowering keywords (--defer-pp-recv, --max-active-stages), and which of them
/// the user gave (PyTorch's defaults otherwise).
struct LoweringKeywords {
  RuntimeLowering values;
  bool defer_pp_recv_given = false, max_active_stages_given = false;
  bool any_given() const { return defer_pp_recv_given || max_active_stages_given; }
};

/// How a command prepares its schedule.
struct Preparation {
  Lowering lower = Lowering::None;
  Runner runner = Runner::AsLowered;
  Runtime runtime = Runtime::PyTorch;  ///< with Runner::Runtime
  /// --lower runtime and the pytorch runtime both lower with them.
  LoweringKeywords keywords;
  /// The family synthesized (empty for a file): PyTorch's single-stage classes take no keywords.
  std::string family;
  /// PyTorch 00722e64 (--pytorch-commit old), whose runtime has no lowering keywords.
  bool old_pytorch = false;

  /// Whether a compute-only schedule (every synthesis) comes out with comms added: about three
  /// times its actions, which a synthesis's size budget counts in advance.
  bool lowers_compute_only() const;
  /// Throws UserError where PyTorch would not take the keywords (as its constructor would say),
  /// or where nothing lowers with them. A command calls it before reading its input.
  void check_keywords() const;
};

/// The schedule as given, with where a file's actions are; and what runs of it.
struct PreparedSchedule {
  Schedule given;
  SourceMap source;  ///< empty for a synthesis
  /// What runs, when it differs from `given` (else empty: a schedule of millions of actions is
  /// not copied to say it is unchanged).
  std::optional<Schedule> lowered;
  /// Megatron's runtime left the schedule's SEND and RECV out (it places its own).
  bool dropped_comms = false;

  const Schedule& as_run() const { return lowered ? *lowered : given; }
  /// What runs, taken out; the rest is freed.
  Schedule take_as_run() &&;
};

/// Where a preparation failed: PyTorch's passes rejected the schedule at `step`, which was given
/// `input` (the schedule as given, or as lowered by --lower), to draw the grid and name the
/// stuck actions.
class PreparationError : public PassError {
 public:
  enum class Step : std::uint8_t { Lower, Runtime, LockStep };
  PreparationError(const PassError& e, Step step, Lowering lower, Schedule input)
      : PassError(e), step_(step), lower_(lower), input_(std::make_shared<const Schedule>(std::move(input))) {}
  Step step() const { return step_; }
  Lowering lower() const { return lower_; }  ///< the --lower asked for (what failed at Step::Lower)
  const Schedule& input() const { return *input_; }

 private:
  Step step_;
  Lowering lower_;
  std::shared_ptr<const Schedule> input_;  // shared: an exception is copied as it is thrown
};

/// Lowers `given` as `how` says (see the file comment). Throws PreparationError.
PreparedSchedule prepare_schedule(Schedule given, SourceMap source, const Preparation& how);

}  // namespace ppsched
