#include "sim/prepare.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "ir/user_error.hpp"

namespace ppsched {

namespace {

constexpr std::array<std::pair<Lowering, std::string_view>, 4> kLoweringNames{{
    {Lowering::None, "none"},
    {Lowering::SendRecv, "send-recv"},
    {Lowering::Runtime, "runtime"},
    {Lowering::MergeBw, "merge-bw"},
}};

// The user's lowering (--lower), or the schedule itself for none.
Schedule apply_lowering(const Schedule& s, Lowering l, const RuntimeLowering& keywords) {
  switch (l) {
    case Lowering::SendRecv:
      return lower_send_recv(s);
    case Lowering::Runtime:
      return lower_runtime_recipe(s, keywords);
    case Lowering::MergeBw:
      return merge_bw(s);
    case Lowering::None:
      break;
  }
  return s;
}

// Whether PyTorch's runtime recipe runs with the keywords: --lower runtime, or the pytorch
// runtime on a compute-only schedule (counted in advance, before the schedule is known).
bool keywords_apply(const Preparation& p) {
  return p.lower == Lowering::Runtime || (p.runner == Runner::Runtime && p.runtime == Runtime::PyTorch);
}

}  // namespace

std::string_view lowering_name(Lowering l) {
  for (const auto& [value, name] : kLoweringNames)
    if (value == l) return name;
  return "none";
}

std::optional<Lowering> lowering_from_name(std::string_view name) {
  for (const auto& [value, known] : kLoweringNames)
    if (known == name) return value;
  return std::nullopt;
}

bool Preparation::lowers_compute_only() const {
  // Any --lower counts, merge-bw too: an estimate that errs towards refusing.
  return lower != Lowering::None || (runner == Runner::Runtime && runtime == Runtime::PyTorch);
}

void Preparation::check_keywords() const {
  if (!keywords.any_given()) return;
  // PyTorch names the first keyword it does not take.
  const std::string_view first = keywords.defer_pp_recv_given ? "defer_pp_recv" : "max_active_stages";
  const std::string flag = keywords.defer_pp_recv_given ? "--defer-pp-recv" : "--max-active-stages";
  if (!keywords_apply(*this))
    throw UserError(flag +
                    " changes PyTorch's runtime lowering, and nothing here lowers that way: give --lower runtime");
  // What PyTorch's constructor says for a keyword it does not take.
  auto refuse = [&](std::string_view cls, std::string_view why) {
    throw UserError(fmt::format("{}: {} (TypeError: {}.__init__() got an unexpected keyword argument '{}')", flag, why,
                                cls, first));
  };
  if (old_pytorch) refuse("_PipelineScheduleRuntime", "PyTorch 00722e64 (--pytorch-commit old) has no such keyword");
  if (family == "1F1B") refuse("Schedule1F1B", "PyTorch's single-stage schedules take no lowering keywords");
  if (family == "GPipe") refuse("PipelineScheduleSingle", "PyTorch's single-stage schedules take no lowering keywords");
}

Schedule PreparedSchedule::take_as_run() && {
  Schedule out = lowered ? std::move(*lowered) : std::move(given);
  given = {};
  lowered.reset();
  source = {};
  return out;
}

PreparedSchedule prepare_schedule(Schedule given, SourceMap source, const Preparation& how) {
  PreparedSchedule out;
  out.source = std::move(source);
  using Step = PreparationError::Step;
  // Each step's input is moved into the error when PyTorch's passes reject it.
  std::optional<Schedule> current;
  if (how.lower != Lowering::None) {
    try {
      current = apply_lowering(given, how.lower, how.keywords.values);
    } catch (const PassError& e) {
      throw PreparationError(e, Step::Lower, how.lower, std::move(given));
    }
  }
  const Schedule& lowered = current ? *current : given;
  try {
    if (how.runner == Runner::Runtime) {
      out.dropped_comms = how.runtime == Runtime::Megatron && has_comms(lowered);
      if (runtime_lowers(how.runtime, lowered) || out.dropped_comms)
        current = schedule_as_run(lowered, how.runtime, how.keywords.values);
    } else if (how.runner == Runner::LockStep && !has_comms(lowered)) {
      // PyTorch's dry run simulates the output of _add_send_recv: a compute-only order would
      // never move data.
      current = lower_send_recv(lowered);
    }
  } catch (const PassError& e) {
    throw PreparationError(e, how.runner == Runner::Runtime ? Step::Runtime : Step::LockStep, how.lower,
                           current ? std::move(*current) : std::move(given));
  }
  out.given = std::move(given);
  out.lowered = std::move(current);
  return out;
}

}  // namespace ppsched
