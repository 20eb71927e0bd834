#include "sim/activation_liveness.hpp"

#include <algorithm>
#include <cstdint>
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

// How many slots PyTorch's greedy colouring uses: it takes the lifetimes by (start, release, input
// order) and reuses a slot once the lifetime holding it ended before the new one starts, so it
// opens a slot only where every slot open so far holds a lifetime alive at that start. The count
// is therefore the most lifetimes alive at one position (both ends included), which one sweep
// over the order's positions finds, without the sort and the heap (docs/bench.md, "Figures behind
// the simulator's choices").
std::uint32_t slot_count(const std::vector<std::pair<std::size_t, std::size_t>>& intervals, std::size_t positions) {
  std::vector<std::int32_t> change(positions + 1, 0);  // lifetimes starting here minus those that ended just before
  for (const auto& [start, release] : intervals) {
    ++change[start];
    --change[release + 1];
  }
  std::int32_t alive = 0, most = 0;
  for (std::size_t pos = 0; pos < positions; ++pos) most = std::max(most, alive += change[pos]);
  return static_cast<std::uint32_t>(most);
}

// One rank's lifetimes in flat arrays indexed by (the stage's place among the rank's stages,
// microbatch): positions of the forward and of the release, and whether an I and a W were seen.
class RankLiveness {
 public:
  RankLiveness(const Schedule& s, std::vector<std::uint32_t> stages, std::uint32_t microbatches)
      : s_(s), stages_(std::move(stages)), microbatches_(microbatches) {
    for (std::size_t k = 0; k < stages_.size(); ++k) {
      if (stages_[k] >= local_.size()) local_.resize(stages_[k] + 1, kNone32);
      local_[stages_[k]] = static_cast<std::uint32_t>(k);
    }
    const std::size_t n = stages_.size() * microbatches_;
    forward_.assign(n, kNone);
    release_.assign(n, kNone);
    input_.assign(n, 0);
    weight_.assign(n, 0);
  }

  std::uint32_t slots(const std::vector<Action>& order, LivenessGranularity g) {
    for (std::size_t pos = 0; pos < order.size(); ++pos)
      if (!order[pos].is_idle()) record(order[pos], pos);
    // Stages in order, as PyTorch sorts its (stage, microbatch) keys.
    std::vector<std::uint32_t> by_stage(stages_.size());
    for (std::size_t k = 0; k < by_stage.size(); ++k) by_stage[k] = static_cast<std::uint32_t>(k);
    std::sort(by_stage.begin(), by_stage.end(),
              [&](std::uint32_t x, std::uint32_t y) { return stages_[x] < stages_[y]; });
    missing(forward_, by_stage, "Forward actions do not match tracked activations; ");
    missing(release_, by_stage, "Backward release actions do not match tracked activations; ");
    std::vector<Key> w_without_i;
    for (std::uint32_t k : by_stage)
      for (std::uint32_t m = 0; m < microbatches_; ++m)
        if (weight_[at(k, m)] && !input_[at(k, m)]) w_without_i.push_back({stages_[k], m});
    if (!w_without_i.empty())
      throw LivenessError("Activation lifetimes have weight backward without input backward: " + tuples(w_without_i));
    for (std::uint32_t k : by_stage)
      for (std::uint32_t m = 0; m < microbatches_; ++m)
        if (release_[at(k, m)] < forward_[at(k, m)])
          throw LivenessError("Activation lifetime " + tuple({stages_[k], m}) + " ends before its forward");
    std::vector<std::pair<std::size_t, std::size_t>> intervals;
    if (g == LivenessGranularity::StageMicrobatch) {
      intervals.reserve(forward_.size());
      for (std::uint32_t k : by_stage)
        for (std::uint32_t m = 0; m < microbatches_; ++m) intervals.push_back({forward_[at(k, m)], release_[at(k, m)]});
    } else {
      for (std::uint32_t m = 0; m < microbatches_; ++m) {
        std::size_t first = kNone, last = 0;
        for (std::size_t k = 0; k < stages_.size(); ++k) {
          first = std::min(first, forward_[at(k, m)]);
          last = std::max(last, release_[at(k, m)]);
        }
        intervals.push_back({first, last});
      }
    }
    return slot_count(intervals, order.size());
  }

 private:
  static constexpr std::size_t kNone = SIZE_MAX;
  static constexpr std::uint32_t kNone32 = 0xFFFFFFFF;
  std::size_t at(std::size_t k, std::uint32_t m) const { return k * microbatches_ + m; }

  void record(const Action& a, std::size_t pos) {
    if (a.is_container()) {
      for (const Action& sub : s_.subs(a)) record(sub, pos);
      return;
    }
    if (!is_compute(a.kind) || !a.has_stage() || a.stage >= local_.size() || local_[a.stage] == kNone32) return;
    // The message only when there is one to give: this runs for every action.
    auto text = [&] { return action_text(a, s_.sub_actions); };
    if (!a.has_microbatch()) throw LivenessError("Compute action " + text() + " has no microbatch index");
    if (a.microbatch() >= microbatches_)
      throw LivenessError("Action " + text() + " has a microbatch outside [0, " + std::to_string(microbatches_) + ")");
    const std::size_t i = at(local_[a.stage], a.microbatch());
    const Key k{a.stage, a.microbatch()};
    switch (a.kind) {
      case ActionKind::F:
        if (forward_[i] != kNone) throw LivenessError("Activation lifetime " + tuple(k) + " has multiple forwards");
        forward_[i] = pos;
        break;
      case ActionKind::I:
        if (input_[i]) throw LivenessError("Activation lifetime " + tuple(k) + " has multiple input backwards");
        input_[i] = 1;
        break;
      case ActionKind::B:
      case ActionKind::W:
        if (release_[i] != kNone)
          throw LivenessError("Activation lifetime " + tuple(k) + " has multiple release actions");
        release_[i] = pos;
        if (a.kind == ActionKind::W) weight_[i] = 1;
        break;
      default:
        break;
    }
  }

  // Every (stage, microbatch) has its action, or PyTorch's message listing the missing ones. No
  // extra ones can be recorded: record() refuses a microbatch out of range first.
  void missing(const std::vector<std::size_t>& positions, const std::vector<std::uint32_t>& by_stage,
               const char* what) const {
    std::vector<Key> absent;
    for (std::uint32_t k : by_stage)
      for (std::uint32_t m = 0; m < microbatches_; ++m)
        if (positions[at(k, m)] == kNone) absent.push_back({stages_[k], m});
    if (!absent.empty()) throw LivenessError(std::string(what) + "missing=" + tuples(absent) + ", extra=[]");
  }

  const Schedule& s_;
  std::vector<std::uint32_t> stages_;
  std::uint32_t microbatches_;
  std::vector<std::uint32_t> local_;  // stage -> its place in stages_
  std::vector<std::size_t> forward_, release_;
  std::vector<std::uint8_t> input_, weight_;
};

}  // namespace

std::string_view liveness_granularity_name(LivenessGranularity g) {
  return g == LivenessGranularity::StageMicrobatch ? "stage_microbatch" : "microbatch";
}

std::optional<LivenessGranularity> liveness_granularity_from_name(std::string_view name) {
  for (LivenessGranularity g : kLivenessGranularities)
    if (liveness_granularity_name(g) == name) return g;
  return std::nullopt;
}

MemoryModel slot_memory_model(std::uint32_t stages) {
  MemoryModel m;
  m.activation.assign(stages, 1.0);
  m.weight_grad = m.activation;
  return m;
}

ActivationLiveness activation_liveness(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                       std::uint32_t microbatches, LivenessGranularity granularity) {
  ActivationLiveness out;
  out.granularity = granularity;
  for (std::uint32_t r = 0; r < s.ranks.size(); ++r) {
    std::vector<std::uint32_t> stages;
    for (std::uint32_t st = 0; st < stage_to_rank.size(); ++st)
      if (stage_to_rank[st] == r) stages.push_back(st);
    std::uint32_t slots = 0;
    try {
      if (!stages.empty()) slots = RankLiveness(s, stages, microbatches).slots(s.ranks[r].actions, granularity);
    } catch (const LivenessError& e) {
      throw LivenessError(e.what(), r);  // the rank, which PyTorch's per-rank message leaves out
    }
    out.slots_per_rank.push_back(slots);
    out.peak = std::max(out.peak, slots);
  }
  return out;
}

}  // namespace ppsched
