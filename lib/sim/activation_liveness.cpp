#include "sim/activation_liveness.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <string>
#include <utility>

#include "ir/action_text.hpp"

namespace ppsched {

namespace {

using Key = std::pair<std::uint32_t, std::uint32_t>;  // (stage, microbatch)

// Python's repr of a sorted list of (stage, microbatch) tuples.
std::string tuples(const std::vector<Key>& keys) {
  std::string out = "[";
  for (std::size_t i = 0; i < keys.size(); ++i)
    out += (i ? ", (" : "(") + std::to_string(keys[i].first) + ", " + std::to_string(keys[i].second) + ")";
  return out + "]";
}

std::string tuple(const Key& k) { return "(" + std::to_string(k.first) + ", " + std::to_string(k.second) + ")"; }

// PyTorch's greedy colouring: by (start, release, input order); a slot is free again once the
// lifetime holding it ended before the new one starts. Returns the slot count.
std::uint32_t assign_slots(const std::vector<std::pair<std::size_t, std::size_t>>& intervals) {
  std::vector<std::size_t> order(intervals.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return intervals[a] != intervals[b] ? intervals[a] < intervals[b] : a < b;
  });
  using Held = std::pair<std::size_t, std::uint32_t>;  // (release, slot)
  std::priority_queue<Held, std::vector<Held>, std::greater<>> active;
  std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> free_slots;
  std::uint32_t next = 0;
  for (std::size_t i : order) {
    const auto [start, release] = intervals[i];
    while (!active.empty() && active.top().first < start) {
      free_slots.push(active.top().second);
      active.pop();
    }
    std::uint32_t slot;
    if (!free_slots.empty()) {
      slot = free_slots.top();
      free_slots.pop();
    } else {
      slot = next++;
    }
    active.push({release, slot});
  }
  return next;
}

class RankLiveness {
 public:
  RankLiveness(const Schedule& s, std::vector<std::uint32_t> stages, std::uint32_t microbatches)
      : s_(s), stages_(std::move(stages)), microbatches_(microbatches) {}

  std::uint32_t slots(const std::vector<Action>& order, LivenessGranularity g) {
    for (std::size_t pos = 0; pos < order.size(); ++pos)
      if (!order[pos].is_idle()) record(order[pos], pos);
    std::vector<Key> expected;
    for (std::uint32_t st : stages_)
      for (std::uint32_t m = 0; m < microbatches_; ++m) expected.push_back({st, m});
    std::sort(expected.begin(), expected.end());
    mismatch(forward_, expected, "Forward actions do not match tracked activations; ");
    mismatch(release_, expected, "Backward release actions do not match tracked activations; ");
    std::vector<Key> w_without_i;
    for (const Key& k : weight_)
      if (!input_.count(k)) w_without_i.push_back(k);
    if (!w_without_i.empty())
      throw LivenessError("Activation lifetimes have weight backward without input backward: " + tuples(w_without_i));
    for (const Key& k : expected)
      if (release_[k] < forward_[k]) throw LivenessError("Activation lifetime " + tuple(k) + " ends before its forward");
    std::vector<std::pair<std::size_t, std::size_t>> intervals;
    if (g == LivenessGranularity::StageMicrobatch) {
      for (const Key& k : expected) intervals.push_back({forward_[k], release_[k]});
    } else {
      for (std::uint32_t m = 0; m < microbatches_; ++m) {
        std::size_t first = SIZE_MAX, last = 0;
        for (std::uint32_t st : stages_) {
          first = std::min(first, forward_[{st, m}]);
          last = std::max(last, release_[{st, m}]);
        }
        intervals.push_back({first, last});
      }
    }
    return assign_slots(intervals);
  }

 private:
  void record(const Action& a, std::size_t pos) {
    if (a.is_container()) {
      for (const Action& sub : s_.subs(a)) record(sub, pos);
      return;
    }
    if (!is_compute(a.kind) || !a.has_stage() || std::find(stages_.begin(), stages_.end(), a.stage) == stages_.end())
      return;
    const std::string text = action_text(a, s_.sub_actions);
    if (!a.has_microbatch()) throw LivenessError("Compute action " + text + " has no microbatch index");
    if (a.microbatch() >= microbatches_)
      throw LivenessError("Action " + text + " has a microbatch outside [0, " + std::to_string(microbatches_) + ")");
    const Key k{a.stage, a.microbatch()};
    switch (a.kind) {
      case ActionKind::F:
        if (!forward_.emplace(k, pos).second)
          throw LivenessError("Activation lifetime " + tuple(k) + " has multiple forwards");
        break;
      case ActionKind::I:
        if (!input_.insert(k).second)
          throw LivenessError("Activation lifetime " + tuple(k) + " has multiple input backwards");
        break;
      case ActionKind::B:
      case ActionKind::W:
        if (!release_.emplace(k, pos).second)
          throw LivenessError("Activation lifetime " + tuple(k) + " has multiple release actions");
        if (a.kind == ActionKind::W) weight_.insert(k);
        break;
      default: break;
    }
  }

  static void mismatch(const std::map<Key, std::size_t>& got, const std::vector<Key>& expected, const char* what) {
    std::vector<Key> missing, extra;
    for (const Key& k : expected)
      if (!got.count(k)) missing.push_back(k);
    for (const auto& [k, pos] : got)
      if (!std::binary_search(expected.begin(), expected.end(), k)) extra.push_back(k);
    if (!missing.empty() || !extra.empty())
      throw LivenessError(std::string(what) + "missing=" + tuples(missing) + ", extra=" + tuples(extra));
  }

  const Schedule& s_;
  std::vector<std::uint32_t> stages_;
  std::uint32_t microbatches_;
  std::map<Key, std::size_t> forward_, release_;
  std::set<Key> input_, weight_;
};

}  // namespace

std::string_view liveness_granularity_name(LivenessGranularity g) {
  return g == LivenessGranularity::StageMicrobatch ? "stage_microbatch" : "microbatch";
}

ActivationLiveness activation_liveness(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                       std::uint32_t microbatches, LivenessGranularity granularity) {
  ActivationLiveness out;
  out.granularity = granularity;
  for (std::uint32_t r = 0; r < s.ranks.size(); ++r) {
    std::vector<std::uint32_t> stages;
    for (std::uint32_t st = 0; st < stage_to_rank.size(); ++st)
      if (stage_to_rank[st] == r) stages.push_back(st);
    const std::uint32_t slots =
        stages.empty() ? 0 : RankLiveness(s, stages, microbatches).slots(s.ranks[r].actions, granularity);
    out.slots_per_rank.push_back(slots);
    out.peak = std::max(out.peak, slots);
  }
  return out;
}

}  // namespace ppsched
