// The parameters a search takes, and a schedule of its shape (shape.hpp).
#include "auto/shape.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "ir/user_error.hpp"

namespace ppsched::auto_detail {

Schedule schedule_of(const AutoParams& p, std::vector<std::vector<Action>>&& programs) {
  Schedule s;
  s.ranks.resize(p.ranks);
  s.num_stages = p.ranks * p.stages_per_rank;
  s.num_microbatches = p.microbatches;
  s.placement = Placement::for_shape(auto_placement(p.stages_per_rank), p.ranks, p.stages_per_rank);
  for (std::uint32_t r = 0; r < p.ranks; ++r) s.ranks[r].actions = std::move(programs[r]);
  return s;
}

void check_params(const AutoParams& p) {
  if (p.ranks == 0 || p.microbatches == 0) throw UserError("auto: ranks and microbatches must be at least 1");
  if (p.stages_per_rank != 1 && p.stages_per_rank != 2)
    throw UserError(fmt::format("auto: --stages-per-rank must be 1 (loop placement) or 2 (V placement), not {}",
                                p.stages_per_rank));
  if (p.ranks * p.stages_per_rank > Action::kMaxStage) throw UserError("auto: too many stages");
}

}  // namespace ppsched::auto_detail
