#include <algorithm>

#include "check/check_support.hpp"
#include "check/rules_impl.hpp"

namespace ppsched::check {

namespace {
// The kinds indexed, in slot order.
int kind_slot(ActionKind k) {
  switch (k) {
    case ActionKind::F: return 0;
    case ActionKind::B: return 1;
    case ActionKind::I: return 2;
    case ActionKind::W: return 3;
    case ActionKind::SendF: return 4;
    case ActionKind::RecvF: return 5;
    case ActionKind::SendB: return 6;
    case ActionKind::RecvB: return 7;
    default: return -1;
  }
}
constexpr std::uint32_t kKinds = 8;
}  // namespace

ActionIndex::ActionIndex(const CheckContext& ctx) : stages_(ctx.stages), microbatches_(ctx.microbatches) {
  const Schedule& s = *ctx.schedule;
  rank_begin_.push_back(0);
  for (const auto& r : s.ranks) rank_begin_.push_back(rank_begin_.back() + static_cast<std::uint32_t>(r.actions.size()));
  dense_ = double(stages_) * double(microbatches_) <= 16.0 * (double(rank_begin_.back()) + 64);
  if (dense_) {
    first_.assign(std::size_t{kKinds} * stages_ * microbatches_, kNone);
    count_.assign(first_.size(), 0);
  }
  for_each_leaf(s, [&](std::size_t r, std::size_t step, const Action& a) {
    if (!a.has_stage() || !a.has_microbatch()) return;
    std::uint64_t i = slot(a.kind, a.stage, a.microbatch());
    if (i == kNoSlot) return;
    std::uint32_t& first = dense_ ? first_[i] : sparse_[i].first;
    std::uint8_t& count = dense_ ? count_[i] : sparse_[i].count;
    if (first == kNone) first = ordinal(r, step);
    if (count < 255) ++count;
  });
}

std::uint64_t ActionIndex::slot(ActionKind k, std::uint32_t stage, std::uint32_t mb) const {
  int ks = kind_slot(k);
  if (ks < 0 || stage >= stages_ || mb >= microbatches_) return kNoSlot;
  // Stage-major: the rules walk each rank's program in order, and a rank holds few stages, so
  // their lookups (and a partner stage's, next door) stream through memory instead of jumping.
  return (std::uint64_t{stage} * microbatches_ + mb) * kKinds + static_cast<std::uint32_t>(ks);
}

std::pair<std::size_t, std::size_t> ActionIndex::position(std::uint32_t ordinal) const {
  auto it = std::upper_bound(rank_begin_.begin(), rank_begin_.end(), ordinal);
  std::size_t rank = static_cast<std::size_t>(it - rank_begin_.begin()) - 1;
  return {rank, ordinal - rank_begin_[rank]};
}

}  // namespace ppsched::check
