#include "report/timeline_shape.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace ppsched {

void check_timeline_shape(const Schedule& s, const Timeline& t, const char* view) {
  const std::size_t n = t.size();
  if (t.end.size() != n || t.stream.size() != n || t.step.size() != n)
    throw std::logic_error(fmt::format("{}: the timeline's arrays have different lengths", view));
  if (!t.rank_begin.empty() && (t.rank_count() != s.rank_count() || t.rank_begin.front() != 0 ||
                                t.rank_begin.back() != n || !std::is_sorted(t.rank_begin.begin(), t.rank_begin.end())))
    throw std::invalid_argument(
        fmt::format("{}: the timeline ({} ranks, {} entries) is not one of this schedule "
                    "({} ranks)",
                    view, t.rank_count(), n, s.rank_count()));
  if (t.rank_begin.empty() && n != 0)
    throw std::logic_error(fmt::format("{}: timeline entries but no rank_begin", view));
}

}  // namespace ppsched
