#include "ir/schedule.hpp"

#include <algorithm>

#include "ir/rank_halves.hpp"

namespace ppsched {

std::uint32_t SubActionTable::add(std::span<const Action> actions) {
  items_.insert(items_.end(), actions.begin(), actions.end());
  offsets_.push_back(static_cast<std::uint32_t>(items_.size()));
  return static_cast<std::uint32_t>(offsets_.size() - 2);
}

void StepColumns::push_back_rare(std::uint32_t column) {
  const std::size_t step = steps_.size();
  if (step % 64 == 0) {
    every_64th_.push_back(column);
    steps_.push_back(0);
  } else {
    steps_.push_back(kAside);
    aside_.emplace_back(static_cast<std::uint32_t>(step), column);
  }
  last_ = column;
}

std::uint32_t StepColumns::operator[](std::size_t step) const {
  const std::size_t first = step / 64 * 64;
  std::uint32_t column = every_64th_[step / 64];
  for (std::size_t i = first + 1; i <= step; ++i) {
    if (steps_[i] != kAside) {
      column += steps_[i];
      continue;
    }
    const auto at = std::lower_bound(aside_.begin(), aside_.end(),
                                     std::pair<std::uint32_t, std::uint32_t>(static_cast<std::uint32_t>(i), 0));
    column = at->second;
  }
  return column;
}

Schedule empty_like(const Schedule& s) {
  Schedule out;
  out.sub_actions = s.sub_actions;
  out.placement = s.placement;
  out.num_stages = s.num_stages;
  out.num_microbatches = s.num_microbatches;
  out.ranks.resize(s.ranks.size());
  return out;
}

std::size_t Schedule::step_count() const {
  std::size_t n = 0;
  for (const auto& r : ranks) n += r.actions.size();
  return n;
}

std::size_t Schedule::action_count() const {
  std::size_t n = 0;
  for (const auto& r : ranks)
    for (const Action& a : r.actions) n += a.is_idle() ? 0 : 1;
  return n;
}

// infer_stage_count and infer_microbatch_count run on every file validate or simulate reads: a
// tight loop over the plain actions, which GCC vectorizes, and the containers' sub-actions apart
// (a branch per action for idle steps and containers made each pass several times slower), over
// each half of the ranks on its own thread (ir/rank_halves.hpp).
template <class Extent>
std::uint32_t largest_plus_one(const Schedule& s, Extent extent) {
  std::uint32_t largest[2] = {0, 0};
  for_rank_halves(s, [&](std::size_t half, std::size_t begin, std::size_t end) {
    std::uint32_t n = 0;
    bool containers = false;
    for (std::size_t r = begin; r < end; ++r)
      for (const Action& a : s.ranks[r].actions) {
        containers |= a.is_container();
        n = std::max(n, a.is_container() ? 0u : extent(a));
      }
    if (containers)
      for (std::size_t r = begin; r < end; ++r)
        for (const Action& a : s.ranks[r].actions)
          if (a.is_container())
            for (const Action& sub : s.subs(a))
              if (!sub.is_container()) n = std::max(n, extent(sub));
    largest[half] = n;
  });
  return std::max(largest[0], largest[1]);
}

std::uint32_t infer_stage_count(const Schedule& s) {
  // Idle steps have no stage: kNoStage + 1 wraps to 0 in 16 bits.
  return largest_plus_one(s, [](const Action& a) -> std::uint32_t { return std::uint16_t(a.stage + 1u); });
}

std::uint32_t infer_microbatch_count(const Schedule& s) {
  // Idle steps have no microbatch: kNoMicrobatch + 1 wraps to 0.
  return largest_plus_one(s, [](const Action& a) -> std::uint32_t { return a.index + 1u; });
}

void ShapeGatherer::add_rank(std::uint32_t rank, std::span<const Action> program, const SubActionTable& subs) {
  Rank gathered(*this, rank);
  for (const Action& a : program) {
    if (!a.is_container()) [[likely]] {
      gathered.add(a);
      continue;
    }
    for (const Action& sub : subs.group(a.group())) {
      if (sub.has_stage()) place(sub.stage, rank);
      if (!sub.is_container()) microbatches_ = std::max(microbatches_, sub.index + 1u);
    }
  }
  gathered.done();
}

void ShapeGatherer::merge(const ShapeGatherer& other, std::uint32_t first_rank) {
  for (std::size_t st = 0; st < other.rank_of_.size(); ++st)
    if (other.rank_of_[st] != kUnplaced) place(static_cast<std::uint16_t>(st), other.rank_of_[st] + first_rank);
  microbatches_ = std::max(microbatches_, other.microbatches_);
}

InferredShape ShapeGatherer::result() const { return {Placement::explicit_map(rank_of_), microbatches_}; }

// Each half of the ranks on its own thread (ir/rank_halves.hpp).
Placement infer_placement(const Schedule& s) { return infer_shape(s).placement; }

InferredShape infer_shape(const Schedule& s) {
  ShapeGatherer halves[2];
  for_rank_halves(s, [&](std::size_t half, std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r)
      halves[half].add_rank(static_cast<std::uint32_t>(r), s.ranks[r].actions, s.sub_actions);
  });
  halves[0].merge(halves[1], 0);
  return halves[0].result();
}

bool has_comms(const Schedule& s) {
  for (const auto& r : s.ranks)
    if (std::any_of(r.actions.begin(), r.actions.end(), [](const Action& a) { return is_send_recv(a.kind); }))
      return true;
  return false;
}

std::uint32_t stated_stages(const Schedule& s) { return s.num_stages ? s.num_stages : infer_stage_count(s); }

std::uint32_t stated_microbatches(const Schedule& s) {
  return s.num_microbatches ? s.num_microbatches : infer_microbatch_count(s);
}

std::uint32_t stages_in_use(const Schedule& s) { return std::max(s.num_stages, infer_stage_count(s)); }

std::uint32_t microbatches_in_use(const Schedule& s) { return std::max(s.num_microbatches, infer_microbatch_count(s)); }

Placement placement_of(const Schedule& s) {
  return s.placement.style != PlacementStyle::Unspecified ? s.placement : infer_placement(s);
}

std::vector<std::uint32_t> stage_to_rank_in_use(const Schedule& s) { return stage_to_rank_in_use(s, placement_of(s)); }

std::vector<std::uint32_t> stage_to_rank_in_use(const Schedule& s, const Placement& placed) {
  std::vector<std::uint32_t> map = placed.stage_to_rank;
  // An inferred map ends at the highest stage used (infer_placement), so only a stated one needs
  // the stage count, which is another pass over every action.
  const bool inferred = s.placement.style == PlacementStyle::Unspecified;
  const std::size_t stages = inferred ? std::max<std::size_t>(s.num_stages, map.size()) : stages_in_use(s);
  map.resize(std::max(map.size(), stages), 0);
  return map;
}

bool same_schedule(const Schedule& a, const Schedule& b) {
  if (a.num_stages != b.num_stages || a.num_microbatches != b.num_microbatches || !(a.placement == b.placement) ||
      a.ranks.size() != b.ranks.size())
    return false;
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    const auto& x = a.ranks[r].actions;
    const auto& y = b.ranks[r].actions;
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (x[i].is_container() != y[i].is_container()) return false;
      if (!x[i].is_container()) {
        if (!(x[i] == y[i])) return false;
        continue;
      }
      auto sx = a.subs(x[i]), sy = b.subs(y[i]);
      if (x[i].kind != y[i].kind || !std::equal(sx.begin(), sx.end(), sy.begin(), sy.end())) return false;
    }
  }
  return true;
}

}  // namespace ppsched
