// SEND/RECV insertion (PyTorch's `_add_send_recv`), event-driven so that it is linear.
//
// PyTorch repeats rounds over the ranks in ascending order; a rank whose head is ready emits it
// (with the SEND right after it on the same rank, and the RECV appended at once to the
// receiving rank's output) and moves on, the others are skipped. Readiness looks only at the
// rank's own set of emitted actions, and that set changes only when the rank emits or when
// another rank appends a RECV to it. So a rank that was not ready sleeps until a RECV arrives,
// and each round visits only the ranks that moved in the previous round or were woken. A rank
// woken by a lower rank is visited later in the same round, as PyTorch would; woken by a higher
// rank, in the next. That reproduces PyTorch's output exactly with work proportional to the
// output (times log R for the ascending order), where PyTorch spends a full sweep of the ranks
// per round and a `list.pop(0)` per action.
#include <bit>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/action_text.hpp"
#include "passes/done_set.hpp"
#include "passes/passes.hpp"
#include "passes/pytorch_view.hpp"

namespace ppsched {

namespace {

class SendRecvLowering {
 public:
  SendRecvLowering(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank, std::uint32_t num_stages)
      : s_(s),
        map_(stage_to_rank),
        last_stage_(static_cast<std::int64_t>(num_stages) - 1),
        done_(stage_to_rank, microbatches_in_use(s), s.step_count()) {}

  Schedule run();

 private:
  // The ranks to visit in a round, taken in ascending order: a bit per rank. A rank is only ever
  // added above the one last taken (a wake from a lower rank, in this round) or to a round not
  // begun, so the lowest is found by scanning on from the last taken: a word per 64 ranks a round,
  // where a heap paid a log R push and pop per visit.
  class Queue {
   public:
    void reset(std::size_t ranks) {
      words_.assign((ranks + 63) / 64, 0);
      from_ = 0;
      count_ = 0;
    }
    bool empty() const { return count_ == 0; }
    void push(std::uint32_t rank) {
      std::uint64_t& w = words_[rank / 64];
      const std::uint64_t bit = std::uint64_t{1} << (rank % 64);
      count_ += (w & bit) == 0;
      w |= bit;
    }
    std::uint32_t pop() {
      while (words_[from_] == 0) ++from_;
      std::uint64_t& w = words_[from_];
      const auto rank = static_cast<std::uint32_t>(from_ * 64 + static_cast<std::size_t>(std::countr_zero(w)));
      w &= w - 1;
      --count_;
      return rank;
    }
    /// Starts the next round's scan from the lowest rank.
    void rewind() { from_ = 0; }

   private:
    std::vector<std::uint64_t> words_;
    std::size_t from_ = 0, count_ = 0;
  };

  // The per-rank sets of emitted actions (passes/done_set.hpp): a bit per kind in a (stage,
  // microbatch) cell for the stage's own rank, which is every action of a well-formed schedule.
  bool done(std::uint32_t rank, std::optional<Action> a) const {
    return a && done_.contains(rank, a->stage, a->kind, a->index);
  }
  // Readiness only ever asks about F, I, B, RECV_F and RECV_B, so only those are recorded.
  void record(std::uint32_t rank, const Action& a) {
    switch (a.kind) {
      case ActionKind::F:
      case ActionKind::I:
      case ActionKind::B:
      case ActionKind::RecvF:
      case ActionKind::RecvB:
        done_.insert(rank, a.stage, a.kind, a.index);
        break;
      default:
        break;
    }
  }
  bool ready(std::uint32_t rank, const Action& leaf) const;
  bool has_comms(std::uint32_t rank, const Action& leaf) const;
  /// The stage's rank in the map; nullopt where PyTorch's dict has no key.
  std::optional<std::uint32_t> placed(std::int64_t stage) const;
  std::uint32_t rank_of(std::int64_t stage, std::uint32_t rank, const Action& leaf) const;
  void emit(std::uint32_t rank, const Action& head);
  void wake(std::uint32_t rank, std::uint32_t by);
  std::vector<std::size_t> output_sizes() const;

  const Schedule& s_;
  const std::vector<std::uint32_t>& map_;
  const std::int64_t last_stage_;  // num_stages - 1, as PyTorch compares it (-1 for no stages)

  Schedule out_;
  DoneSet done_;
  std::vector<std::uint8_t> blocked_;
  std::vector<std::uint8_t> finished_;
  Queue now_, next_;
};

// PyTorch's `_ready_to_schedule`, on the rank's own emitted actions.
bool SendRecvLowering::ready(std::uint32_t rank, const Action& leaf) const {
  const std::int64_t st = pytorch::stage(leaf);
  const std::uint32_t mb = leaf.microbatch();
  if (leaf.kind == ActionKind::F && st != 0)
    return done(rank, pytorch::plain(st, ActionKind::RecvF, mb)) ||
           done(rank, pytorch::plain(st - 1, ActionKind::F, mb));
  if ((leaf.kind == ActionKind::I || leaf.kind == ActionKind::B) && st != last_stage_)
    return done(rank, pytorch::plain(st, ActionKind::RecvB, mb)) ||
           done(rank, pytorch::plain(st + 1, ActionKind::I, mb)) ||
           done(rank, pytorch::plain(st + 1, ActionKind::B, mb));
  return true;
}

// PyTorch looks the stage up in its stage-to-rank dict and fails with a bare KeyError.
std::optional<std::uint32_t> SendRecvLowering::placed(std::int64_t stage) const {
  if (stage < 0 || stage > Action::kMaxStage || static_cast<std::uint64_t>(stage) >= map_.size() ||
      map_[static_cast<std::size_t>(stage)] == kUnplaced)
    return std::nullopt;
  return map_[static_cast<std::size_t>(stage)];
}

std::uint32_t SendRecvLowering::rank_of(std::int64_t stage, std::uint32_t rank, const Action& leaf) const {
  if (const auto r = placed(stage)) return *r;
  throw PassError("Rank " + std::to_string(rank) + ": " + action_text(leaf, s_.sub_actions) +
                  " needs the rank of stage " + std::to_string(stage) +
                  ", which the stage-to-rank map does not have (PyTorch: KeyError: " + std::to_string(stage) + ")");
}

// PyTorch's `_has_comms`: a neighbour stage on another rank. It evaluates the neighbour first.
bool SendRecvLowering::has_comms(std::uint32_t rank, const Action& leaf) const {
  const std::int64_t st = pytorch::stage(leaf);
  if (leaf.kind == ActionKind::F) return st != last_stage_ && rank_of(st + 1, rank, leaf) != rank_of(st, rank, leaf);
  if (leaf.kind == ActionKind::I || leaf.kind == ActionKind::B)
    return st != 0 && rank_of(st - 1, rank, leaf) != rank_of(st, rank, leaf);
  return false;
}

void SendRecvLowering::emit(std::uint32_t rank, const Action& head) {
  out_.ranks[rank].actions.push_back(head);
  pytorch::for_each_leaf(s_, head, [&](const Action& leaf) {
    record(rank, leaf);
    if (!has_comms(rank, leaf)) return;
    // has_comms found both stages in the map, so they are real stages (0..kMaxStage).
    const bool forward = leaf.kind == ActionKind::F;
    const auto st = static_cast<std::uint16_t>(leaf.stage);
    const auto peer_stage = static_cast<std::uint16_t>(forward ? st + 1 : st - 1);
    const Action send = Action::make(forward ? ActionKind::SendF : ActionKind::SendB, st, leaf.microbatch());
    const Action recv = Action::make(forward ? ActionKind::RecvF : ActionKind::RecvB, peer_stage, leaf.microbatch());
    out_.ranks[rank].actions.push_back(send);
    const std::uint32_t peer = rank_of(peer_stage, rank, leaf);
    if (peer >= out_.ranks.size())
      throw PassError("Rank " + std::to_string(rank) + ": " + action_text(leaf, s_.sub_actions) + " sends to stage " +
                      std::to_string(peer_stage) + " on rank " + std::to_string(peer) + ", but the schedule has " +
                      std::to_string(out_.ranks.size()) + " ranks (PyTorch: KeyError: " + std::to_string(peer) + ")");
    out_.ranks[peer].actions.push_back(recv);
    record(peer, recv);
    wake(peer, rank);
  });
}

// A RECV just reached `rank`: if it was waiting, it looks again; later in this round when
// PyTorch has yet to visit it this round, else in the next.
void SendRecvLowering::wake(std::uint32_t rank, std::uint32_t by) {
  if (!blocked_[rank]) return;
  blocked_[rank] = 0;
  (rank > by ? now_ : next_).push(rank);
}

// Each rank's output length when the lowering finishes: its non-idle actions, a SEND per leaf with
// comms, and a RECV per leaf of another rank that sends to it. Every output is then allocated once
// at its size: a guess of twice the input left 1F1B's rows (three times their input) to grow by
// doubling, which copied them and touched about 60% more fresh memory than the output holds (issue
// 48). A leaf whose neighbour stage the map lacks is skipped: the lowering itself reports it.
std::vector<std::size_t> SendRecvLowering::output_sizes() const {
  const std::size_t ranks = s_.ranks.size();
  std::vector<std::size_t> sizes(ranks, 0);
  for (std::size_t r = 0; r < ranks; ++r)
    for (const Action& head : s_.ranks[r].actions) {
      if (head.is_idle()) continue;
      ++sizes[r];
      pytorch::for_each_leaf(s_, head, [&](const Action& leaf) {
        const bool forward = leaf.kind == ActionKind::F;
        if (!forward && leaf.kind != ActionKind::I && leaf.kind != ActionKind::B) return;
        const std::int64_t st = pytorch::stage(leaf);
        if (forward ? st == last_stage_ : st == 0) return;
        const auto here = placed(st), peer = placed(forward ? st + 1 : st - 1);
        if (!here || !peer || *here == *peer) return;
        ++sizes[r];
        if (*peer < ranks) ++sizes[*peer];
      });
    }
  return sizes;
}

Schedule SendRecvLowering::run() {
  const std::size_t ranks = s_.ranks.size();
  out_.sub_actions = s_.sub_actions;
  out_.placement = s_.placement;
  out_.num_stages = s_.num_stages;
  out_.num_microbatches = s_.num_microbatches;
  out_.ranks.resize(ranks);
  blocked_.assign(ranks, 0);
  finished_.assign(ranks, 0);
  std::vector<std::size_t> cursor(ranks, 0);
  now_.reset(ranks);
  next_.reset(ranks);
  const std::vector<std::size_t> sizes = output_sizes();
  for (std::size_t r = 0; r < ranks; ++r) {
    out_.ranks[r].actions.reserve(sizes[r]);
    now_.push(static_cast<std::uint32_t>(r));
  }
  std::size_t live = ranks;
  while (live > 0) {
    bool progress = false;
    while (!now_.empty()) {
      const std::uint32_t r = now_.pop();
      const auto& program = s_.ranks[r].actions;
      if (program.empty())  // only possible in the first round
        throw PassError("Rank " + std::to_string(r) + " has no actions (PyTorch's _add_send_recv asserts: rank=" +
                        std::to_string(r) + ", len(compute_actions[rank])=0)");
      const Action& head = program[cursor[r]];
      bool is_ready = true;
      pytorch::for_each_leaf(s_, head, [&](const Action& leaf) { is_ready = is_ready && ready(r, leaf); });
      if (!is_ready) {
        blocked_[r] = 1;
        continue;
      }
      if (!head.is_idle()) emit(r, head);
      progress = true;
      if (++cursor[r] == program.size()) {
        finished_[r] = 1;
        --live;
      } else {
        next_.push(r);
      }
    }
    if (!progress) {
      std::vector<PassError::Stuck> stuck;
      for (std::size_t r = 0; r < ranks; ++r)
        if (!finished_[r]) stuck.push_back({static_cast<std::uint32_t>(r), cursor[r]});
      throw PassError("Malformed compute schedule, can't schedule sends/recvs", std::move(stuck));
    }
    std::swap(now_, next_);
    now_.rewind();
  }
  return std::move(out_);
}

}  // namespace

Schedule add_send_recv_round_robin(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                   std::uint32_t num_stages) {
  return SendRecvLowering(s, stage_to_rank, num_stages).run();
}

Schedule add_send_recv(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank, std::uint32_t num_stages) {
  if (std::optional<Schedule> by_rounds = add_send_recv_by_rounds(s, stage_to_rank, num_stages))
    return std::move(*by_rounds);
  return add_send_recv_round_robin(s, stage_to_rank, num_stages);
}

}  // namespace ppsched
