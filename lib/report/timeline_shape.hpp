// The check every view makes before it reads a timeline: its arrays have one length and its
// rank offsets belong to this schedule. A mismatch is a bug upstream, so it throws rather than
// rendering nonsense.
#pragma once

#include "ir/schedule.hpp"
#include "sim/timeline.hpp"

namespace ppsched {

/// Throws std::logic_error or std::invalid_argument, naming `view`, when `t` cannot be a
/// timeline of `s`: a bug upstream either way, never a user's error (UserError).
void check_timeline_shape(const Schedule& s, const Timeline& t, const char* view);

}  // namespace ppsched
