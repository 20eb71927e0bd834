#include <algorithm>

#include "check/check_support.hpp"
#include "check/rules_impl.hpp"

namespace ppsched::check {

ActionIndex::ActionIndex(const CheckContext& ctx) : stages_(ctx.stages), microbatches_(ctx.microbatches) {
  const Schedule& s = *ctx.schedule;
  rank_begin_.push_back(0);
  for (const auto& r : s.ranks)
    rank_begin_.push_back(rank_begin_.back() + static_cast<std::uint32_t>(r.actions.size()));
  first_ = {stages_, microbatches_, rank_begin_.back(), kNone};
  count_ = {stages_, microbatches_, rank_begin_.back(), 0};
  stage_rank_.assign(stages_, kNone);
  stage_kinds_.assign(stages_, 0);
  for_each_leaf(s, [&](std::size_t r, std::size_t step, const Action& a) {
    ++kind_count_[static_cast<std::size_t>(a.kind)];
    if (a.has_stage()) {
      if (a.stage < stages_) {
        std::uint32_t& where = stage_rank_[a.stage];
        if (where == kNone) where = static_cast<std::uint32_t>(r);
        any_stage_on_two_ranks_ |= where != r;
        stage_kinds_[a.stage] |= 1u << static_cast<unsigned>(a.kind);
      } else {
        any_stage_beyond_ = true;
      }
    }
    if (a.has_microbatch() && a.microbatch() >= microbatches_) any_mb_beyond_ = true;
    if (!a.has_stage() || !a.has_microbatch()) return;
    std::uint64_t i = slot(a.kind, a.stage, a.microbatch());
    if (i == kNoSlot) return;
    std::uint32_t& first = first_[i];
    std::uint8_t& count = count_[i];
    if (first == kNone) first = ordinal(r, step);
    any_repeat_ |= count != 0;
    if (count < 255) ++count;
  });
}

std::pair<std::size_t, std::size_t> ActionIndex::position(std::uint32_t ordinal) const {
  auto it = std::upper_bound(rank_begin_.begin(), rank_begin_.end(), ordinal);
  std::size_t rank = static_cast<std::size_t>(it - rank_begin_.begin()) - 1;
  return {rank, ordinal - rank_begin_[rank]};
}

}  // namespace ppsched::check
