// The search's answer ranked as it will be judged (internal to lib/auto): AutoParams::ranked_by.
//
// The search times its candidates under its own model (the timed simulator on compute-only
// schedules, data moving as soon as it is produced). A runtime charges what that model does not
// (PyTorch's receives in program order on one queue, Megatron's per-call costs), so the order of
// two candidates can change under it. Ranked: the search's answer and every handcrafted family of
// the same shape (stages per rank and placement, the families `tune` would list beside it) are
// costed under the ranking rule (sim/runtime_cost.hpp, what tune ranks by) and the best of them
// is the answer. So in any tune table the automatic schedule is never slower than a family of its
// shape, under any runtime and memory model.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "auto/auto_schedule.hpp"

namespace ppsched::auto_detail {

/// `searched` (the search's result; nullopt when nothing fitted under the search's own memory
/// model) with its best replaced by the best of it and this shape's families under p.ranked_by;
/// the ranked candidates are added to `tried`. Throws UserError when none of them fits the cap.
AutoResult rank_as_judged(const AutoParams& p, std::optional<AutoResult> searched);

/// The handcrafted families of the automatic schedule's shape at `stages_per_rank`, in registry order.
std::vector<std::string_view> families_of_shape(std::uint32_t stages_per_rank);

}  // namespace ppsched::auto_detail
