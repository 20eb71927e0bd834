#include "simulate_dry_run.hpp"

#include <stdexcept>

#include "cli_support.hpp"
#include "exit_codes.hpp"
#include "ir/user_error.hpp"
#include "parse/pytorch_csv.hpp"
#include "report/steps_view.hpp"
#include "sim/pytorch_steps.hpp"

namespace ppsched::cli {

int run_dry_run(Schedule& s, const std::optional<InferredShapeOf>& known, const SimulateSource& source,
                const std::string& format, const std::string& output) {
  try {
    const std::uint32_t stages = known ? known->stages : stated_stages(s);
    const StepWaits waits =
        known ? pytorch_step_waits(s, known->placement.stage_to_rank, stages, kDefaultMaxStepCells, known->microbatches)
              : pytorch_step_waits(s, placement_of(s).stage_to_rank, stages);
    // The CSV is written off the programs and the waits; the other faces read the timelines.
    if (format != "csv") put_step_timelines(s, waits, stages, s);
    write_output(output, [&](ByteSink& out) {
      if (format == "csv")
        write_pytorch_csv(s, waits, out);
      else if (format == "json")
        out.write(pytorch_steps_json(source, s));
      else
        write_steps_text(s, out);
    });
    return kExitOk;
  } catch (const SimDeadlock& d) {
    print_error(steps_deadlock_text(d, s));
    return kExitFindings;
  } catch (const UserError& e) {
    print_error(e.what());
    return kExitUsage;
  } catch (const std::length_error& e) {
    print_error(e.what());
    return kExitUsage;
  }
}

}  // namespace ppsched::cli
