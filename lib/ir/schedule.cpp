#include "ir/schedule.hpp"

#include <algorithm>

namespace ppsched {

std::uint32_t SubActionTable::add(std::span<const Action> actions) {
  items_.insert(items_.end(), actions.begin(), actions.end());
  offsets_.push_back(static_cast<std::uint32_t>(items_.size()));
  return static_cast<std::uint32_t>(offsets_.size() - 2);
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

namespace {
// Calls f on every non-idle action and on every sub-action of a container, in program order.
template <class F>
void for_each_leaf(const Schedule& s, F&& f) {
  for (std::size_t r = 0; r < s.ranks.size(); ++r)
    for (const Action& a : s.ranks[r].actions) {
      if (a.is_idle()) continue;
      if (a.is_container()) {
        for (const Action& sub : s.subs(a)) f(r, sub);
      } else {
        f(r, a);
      }
    }
}
}  // namespace

std::uint32_t infer_stage_count(const Schedule& s) {
  std::uint32_t n = 0;
  for_each_leaf(s, [&](std::size_t, const Action& a) {
    if (a.has_stage()) n = std::max<std::uint32_t>(n, a.stage + 1u);
  });
  return n;
}

std::uint32_t infer_microbatch_count(const Schedule& s) {
  std::uint32_t n = 0;
  for_each_leaf(s, [&](std::size_t, const Action& a) {
    if (a.has_microbatch()) n = std::max<std::uint32_t>(n, a.microbatch() + 1u);
  });
  return n;
}

Placement infer_placement(const Schedule& s) {
  std::vector<std::uint32_t> map(infer_stage_count(s), kUnplaced);
  for_each_leaf(s, [&](std::size_t r, const Action& a) {
    if (a.has_stage() && map[a.stage] == kUnplaced) map[a.stage] = static_cast<std::uint32_t>(r);
  });
  return Placement::explicit_map(std::move(map));
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

std::vector<std::uint32_t> stage_to_rank_in_use(const Schedule& s) {
  std::vector<std::uint32_t> map = placement_of(s).stage_to_rank;
  map.resize(std::max<std::size_t>(map.size(), stages_in_use(s)), 0);
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
