#include "sim/runtime.hpp"

#include <algorithm>
#include <cctype>

#include "passes/passes.hpp"

namespace ppsched {

std::string_view runtime_name(Runtime r) { return r == Runtime::PyTorch ? "pytorch" : "ideal"; }

std::optional<Runtime> runtime_from_name(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (Runtime r : {Runtime::PyTorch, Runtime::Ideal})
    if (lower == runtime_name(r)) return r;
  return std::nullopt;
}

std::vector<std::string_view> runtime_names() { return {"pytorch", "ideal"}; }

std::string_view runtime_summary(Runtime r) {
  return r == Runtime::PyTorch
             ? "pytorch: PyTorch's _PipelineScheduleRuntime (compute-only schedules lowered with its runtime "
               "recipe; sends and receives in program order; compute waits for its receives)"
             : "ideal: the schedule as given, data moving as soon as it is produced (a lower bound)";
}

bool runtime_lowers(Runtime r, const Schedule& s) { return r == Runtime::PyTorch && !has_comms(s); }

Schedule schedule_as_run(const Schedule& s, Runtime r) {
  return runtime_lowers(r, s) ? lower_runtime_recipe(s) : s;
}

}  // namespace ppsched
