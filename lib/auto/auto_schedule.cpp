// The automatic schedule (auto_schedule.hpp): the parameters checked, then one search
// (search.hpp) over the rounds of rounds.cpp.
#include "auto/auto_schedule.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "auto/ranked.hpp"
#include "auto/search.hpp"
#include "auto/shape.hpp"
#include "ir/user_error.hpp"
#include "sim/memory.hpp"

namespace ppsched {

AutoResult auto_schedule(const AutoParams& p) {
  auto_detail::check_params(p);
  const auto_detail::Shape shape(p);
  for (std::uint32_t r = 0; r < p.ranks; ++r) {
    double need = shape.base[r];
    for (std::uint32_t s : shape.own[r]) need += shape.act[s];
    if (!fits_under_cap(need, p.memory_cap))
      throw UserError(fmt::format("auto: the memory cap {:.4g} is below what rank {} needs for one microbatch ({:.4g})",
                                  p.memory_cap, r, need));
  }
  if (!p.ranked_by) return auto_detail::Search(p).run();
  std::optional<AutoResult> searched;
  try {
    searched = auto_detail::Search(p).run();
  } catch (const UserError&) {  // nothing fitted under the search's memory model: a family may, as judged
  }
  return auto_detail::rank_as_judged(p, std::move(searched));
}

}  // namespace ppsched
