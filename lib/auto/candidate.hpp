// Measuring a candidate of the automatic search (internal to lib/auto): simulate a schedule
// with the timed model and the memory accounting of `ppsched simulate`, and say whether it fits.
#pragma once

#include <string>

#include "auto/auto_schedule.hpp"

namespace ppsched::auto_detail {

/// Sets `c.fits` from `c.peak` and the cap (no cap: it fits), and why it does not.
void judge_fit(AutoCandidate& c, const AutoParams& p);

/// Simulated makespan, peak and longest rank span of `s`; fits when it finishes under the cap.
AutoCandidate simulate_candidate(std::string origin, const Schedule& s, const AutoParams& p);

}  // namespace ppsched::auto_detail
