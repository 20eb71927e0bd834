// RECV deferral (PyTorch's `_defer_recv_ops`, the `defer_pp_recv` keyword of its runtime
// schedules), in linear time.
//
// Per rank, every RECV is held back and placed as late as it can go: just before the compute
// that consumes it (F takes RECV_F of its stage and microbatch; B and I take RECV_B; W nothing;
// an OVERLAP_F_B takes what its sub-actions take). One exception keeps the ranks from waiting on
// each other: before a SEND to a higher-numbered rank, every RECV held from that rank is placed
// first, in the order it was held, so that the lower rank of a pair always has its receive posted
// when the higher one sends (pytorch/pytorch#172668 deadlocked across nodes without it).
//
// PyTorch keeps the held RECVs in a dict: a RECV held again under the same (stage, kind,
// microbatch) replaces the first one at its place. Here each peer has a queue of held entries in
// holding order, and an entry placed before its consumer is marked taken, so a flush costs only
// what it places.
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/action_text.hpp"
#include "passes/passes.hpp"
#include "passes/pytorch_view.hpp"

namespace ppsched {

namespace {

struct Held {
  Action action;
  bool placed = false;
};

std::uint64_t key(std::int64_t stage, ActionKind kind, std::uint32_t microbatch) {
  return (static_cast<std::uint64_t>(stage & 0xFFFF) << 40) | (static_cast<std::uint64_t>(kind) << 32) | microbatch;
}

class RankDeferral {
 public:
  RankDeferral(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank, std::uint32_t rank)
      : s_(s), map_(stage_to_rank), rank_(rank) {}

  std::vector<Action> run(const std::vector<Action>& program) {
    for (const Action& a : program) {
      if (a.is_idle()) continue;
      if (a.kind == ActionKind::RecvF || a.kind == ActionKind::RecvB) {
        hold(a);
        continue;
      }
      if (a.kind == ActionKind::SendF || a.kind == ActionKind::SendB) {
        const std::uint32_t peer = rank_of(a.kind == ActionKind::SendF ? stage(a) + 1 : stage(a) - 1, a);
        if (rank_ < peer) flush(peer);
      }
      if (a.is_container()) {
        for (const Action& sub : s_.subs(a)) place_input_of(sub);
      } else {
        place_input_of(a);
      }
      out_.push_back(a);
    }
    std::string left;
    for (const Held& h : held_)
      if (!h.placed) left += (left.empty() ? "" : ", ") + action_text(h.action, s_.sub_actions);
    if (!left.empty())
      throw PassError("Malformed input schedule on rank " + std::to_string(rank_) +
                      ": leftover RECV ops with no consumer found: [" + left +
                      "]. Every RECV must be consumed by a downstream compute op.");
    return std::move(out_);
  }

 private:
  static std::int64_t stage(const Action& a) { return pytorch::stage(a); }

  std::uint32_t rank_of(std::int64_t st, const Action& a) const {
    if (st < 0 || static_cast<std::size_t>(st) >= map_.size() || map_[st] == kUnplaced)
      throw PassError("rank " + std::to_string(rank_) + ": '" + action_text(a, s_.sub_actions) + "' has a peer stage " +
                      std::to_string(st) + " that no rank runs (PyTorch: KeyError in _defer_recv_ops)");
    return map_[st];
  }

  void hold(const Action& a) {
    const std::uint64_t k = key(stage(a), a.kind, a.microbatch());
    if (auto it = index_.find(k); it != index_.end() && !held_[it->second].placed) {
      held_[it->second].action = a;  // a dict keeps the key's place and takes the new value
      return;
    }
    const std::uint32_t peer = rank_of(a.kind == ActionKind::RecvF ? stage(a) - 1 : stage(a) + 1, a);
    index_[k] = held_.size();
    by_peer_[peer].push_back(held_.size());
    held_.push_back({a, false});
  }

  void flush(std::uint32_t peer) {
    auto it = by_peer_.find(peer);
    if (it == by_peer_.end()) return;
    for (std::size_t i : it->second) place(i);
    it->second.clear();
  }

  void place(std::size_t i) {
    if (held_[i].placed) return;
    held_[i].placed = true;
    out_.push_back(held_[i].action);
  }

  void place_input_of(const Action& a) {
    ActionKind recv;
    if (a.kind == ActionKind::F)
      recv = ActionKind::RecvF;
    else if (a.kind == ActionKind::B || a.kind == ActionKind::I)
      recv = ActionKind::RecvB;
    else
      return;
    if (auto it = index_.find(key(stage(a), recv, a.microbatch())); it != index_.end()) place(it->second);
  }

  const Schedule& s_;
  const std::vector<std::uint32_t>& map_;
  std::uint32_t rank_;
  std::vector<Action> out_;
  std::vector<Held> held_;
  std::unordered_map<std::uint64_t, std::size_t> index_;
  std::unordered_map<std::uint32_t, std::deque<std::size_t>> by_peer_;
};

}  // namespace

Schedule defer_recv_ops(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank) {
  Schedule out = empty_like(s);
  for (std::uint32_t r = 0; r < s.ranks.size(); ++r)
    out.ranks[r].actions = RankDeferral(s, stage_to_rank, r).run(s.ranks[r].actions);
  return out;
}

}  // namespace ppsched
