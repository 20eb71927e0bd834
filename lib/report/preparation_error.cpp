#include "report/preparation_error.hpp"

#include "ir/action_text.hpp"
#include "report/pipeline_grid.hpp"

namespace ppsched {

namespace {

// What asked for the lowering that failed, in the flags' words.
std::string why(const PreparationError& e) {
  switch (e.step()) {
    case PreparationError::Step::Lower:
      return "--lower " + std::string(lowering_name(e.lower()));
    case PreparationError::Step::Runtime:
      return "--runtime pytorch runs a compute-only schedule as PyTorch's runtime lowers it; --runtime ideal "
             "simulates it as given";
    case PreparationError::Step::LockStep:
      return "--simulator pytorch-steps simulates PyTorch's send/recv lowering";
  }
  return "";
}

}  // namespace

std::string preparation_error_text(const PreparationError& e) {
  const Schedule& s = e.input();
  std::string msg = "cannot lower the schedule (" + why(e) + "): " + e.what();
  if (e.grid_step()) msg += "\n\nFull pipeline schedule:\n" + format_pipeline_grid(s, *e.grid_step());
  for (const PassError::Stuck& stuck : e.stuck())
    msg += "\nnote: rank " + std::to_string(stuck.rank) + " cannot run its step " + std::to_string(stuck.step) + " (" +
           action_text(s.ranks[stuck.rank].actions[stuck.step], s.sub_actions) + "): what it waits for never comes";
  return msg;
}

}  // namespace ppsched
