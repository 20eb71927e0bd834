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
    if (known)
      simulate_pytorch_steps_in_place(s, known->placement.stage_to_rank, known->stages, kDefaultMaxStepCells,
                                      known->microbatches);
    else
      simulate_pytorch_steps_in_place(s, placement_of(s).stage_to_rank, stated_stages(s));
    write_output(output, [&](ByteSink& out) {  // `s` holds the timelines now
      if (format == "csv")
        write_pytorch_csv(s, out);
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
