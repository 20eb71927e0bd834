// step_waits_by_moments (step_moments.hpp): each rank's actions placed in program order, a RECV
// waiting until its SEND is placed.
#include "sim/step_moments.hpp"

#include <algorithm>
#include <limits>

namespace ppsched {

namespace {

constexpr std::uint64_t kNoKey = ~std::uint64_t{0};

// A moment of the loop: step * 2 + pass.
using Moment = std::uint64_t;

// The bits of a (stage, microbatch) cell: what its owner has run, F..RECV_B (kinds 1..8).
constexpr std::uint8_t bit(ActionKind kind) {
  return static_cast<std::uint8_t>(1u << (static_cast<unsigned>(kind) - 1));
}

class MomentRun {
 public:
  MomentRun(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank, std::int64_t last_stage,
            std::uint32_t microbatches)
      : s_(s), owner_(stage_to_rank), last_stage_(last_stage), mbs_(microbatches) {}

  std::optional<StepWaits> run() {
    const std::size_t ranks = s_.rank_count(), stages = owner_.size();
    const std::size_t steps = s_.step_count();
    // Moments fit 32 bits (plus one for "not yet"), and the grids must be no larger than the schedule.
    if (ranks == 0 || steps >= (std::size_t{1} << 30) || double(stages) * double(mbs_) > double(steps) + 1024)
      return std::nullopt;
    done_.assign(stages * mbs_, 0);
    sent_.assign(stages * mbs_ * 2, 0);
    out_.waits.assign(ranks, {});
    out_.cells.assign(ranks, 0);
    first_pass_.assign(steps + 1, false);
    lanes_.resize(ranks);
    work_.reserve(ranks);
    bool any = false;
    for (std::uint32_t r = 0; r < ranks; ++r) {
      const auto& p = s_.ranks[r].actions;
      lanes_[r] = {p.data(), p.data(), p.data() + p.size()};
      any = any || std::any_of(p.begin(), p.end(), [](const Action& a) { return !a.is_idle(); });
      work_.push_back(r);
    }
    if (!any) return std::nullopt;  // PyTorch: not progressing, with no rank stuck
    while (!work_.empty()) {
      const std::uint32_t r = work_.back();
      work_.pop_back();
      if (!advance(r)) return std::nullopt;
    }
    std::int64_t last = -1;
    for (const Lane& lane : lanes_) {
      if (lane.next != lane.end) return std::nullopt;  // a rank that never goes on: a deadlock
      last = std::max(last, lane.prev_step);
    }
    // PyTorch stops at the first step in which no rank ran anything in its first pass.
    for (std::int64_t t = 0; t <= last; ++t)
      if (!first_pass_[static_cast<std::size_t>(t)]) return std::nullopt;
    return std::move(out_);
  }

 private:
  struct Lane {
    const Action* begin = nullptr;
    const Action* next = nullptr;
    const Action* end = nullptr;
    std::int64_t prev_step = -1;     ///< the step of its last action run
    std::uint64_t waiting = kNoKey;  ///< the SEND (sent_ index) its head waits for
  };

  bool owns(std::int64_t stage, std::uint32_t rank) const {
    return stage >= 0 && static_cast<std::size_t>(stage) < owner_.size() && owner_[std::size_t(stage)] == rank;
  }
  // Microbatch-major: a microbatch's cells of neighbouring stages, which the pipeline reads and
  // writes close together in time, share cache lines.
  std::size_t cell(std::int64_t stage, std::uint32_t m) const {
    return std::size_t{m} * owner_.size() + std::size_t(stage);
  }
  bool done(std::int64_t stage, std::uint32_t m, ActionKind kind) const { return done_[cell(stage, m)] & bit(kind); }

  // Places rank r's actions until one waits for a SEND not placed yet (true) or the fast way
  // cannot go on (false: the lock-step loop decides).
  bool advance(std::uint32_t r) {
    Lane& lane = lanes_[r];
    while (lane.next != lane.end) {
      const Action a = *lane.next;
      if (a.is_idle()) {  // the input's idle steps are dropped
        ++lane.next;
        continue;
      }
      // PyTorch first looks up the owner of the action's stage, whatever the kind.
      if (a.is_container() || !owns(a.stage, r)) return false;
      const std::int64_t s = a.stage;
      const std::uint32_t m = a.index;
      if (takes_microbatch(a.kind) && m >= mbs_) return false;
      const std::int64_t t0 = lane.prev_step + 1;
      Moment at = Moment(t0) * 2;
      bool ready = true;
      switch (a.kind) {
        case ActionKind::F:
          ready = s == 0 || done(s, m, ActionKind::RecvF) || (owns(s - 1, r) && done(s - 1, m, ActionKind::F));
          break;
        case ActionKind::I:
        case ActionKind::B:
          ready = s == last_stage_ || done(s, m, ActionKind::RecvB) ||
                  (owns(s + 1, r) && (done(s + 1, m, ActionKind::I) || done(s + 1, m, ActionKind::B)));
          break;
        case ActionKind::SendF:
          ready = done(s, m, ActionKind::F);
          break;
        case ActionKind::SendB:
          ready = done(s, m, ActionKind::I) || done(s, m, ActionKind::B);
          break;
        case ActionKind::RecvF:
        case ActionKind::RecvB: {
          const bool forward = a.kind == ActionKind::RecvF;
          const std::int64_t peer = forward ? s - 1 : s + 1;
          if (peer < 0 || static_cast<std::size_t>(peer) >= owner_.size() || owner_[std::size_t(peer)] >= lanes_.size())
            return false;  // PyTorch's KeyError
          const std::uint32_t q = owner_[std::size_t(peer)];
          if (q == r) {
            ready = done(peer, m, forward ? ActionKind::SendF : ActionKind::SendB);
            break;
          }
          const std::uint64_t key = cell(peer, m) * 2 + !forward;
          if (sent_[key] == 0) {
            lane.waiting = key;
            return true;
          }
          at = std::max(at, seen_at(sent_[key] - 1, q, r));
          break;
        }
        case ActionKind::W:
        case ActionKind::Unshard:
        case ActionKind::Reshard:
        case ActionKind::ReduceGrad:
          break;
        default:
          return false;
      }
      if (!ready) return false;  // waits on its own rank for what never comes: a deadlock
      if ((at >> 1) >= first_pass_.size()) return false;
      place(r, lane, a, at);
    }
    return true;
  }

  // The first check of rank r that sees what rank q ran at moment x.
  // Later in the same pass (q < r), else in the pass after: the step's second, or the next one's first.
  static Moment seen_at(Moment x, std::uint32_t q, std::uint32_t r) { return q < r ? x : x + 1; }

  void place(std::uint32_t r, Lane& lane, const Action& a, Moment at) {
    const std::int64_t t = static_cast<std::int64_t>(at >> 1);
    const std::int64_t idle = t - (lane.prev_step + 1);
    if (idle > 0)
      out_.waits[r].push_back({static_cast<std::uint32_t>(lane.next - lane.begin), static_cast<std::uint32_t>(idle)});
    out_.cells[r] += static_cast<std::size_t>(idle) + 1;
    if ((at & 1) == 0) first_pass_[static_cast<std::size_t>(t)] = true;
    lane.prev_step = t;
    ++lane.next;
    if (a.kind >= ActionKind::F && a.kind <= ActionKind::RecvB) done_[cell(a.stage, a.index)] |= bit(a.kind);
    if (a.kind == ActionKind::SendF || a.kind == ActionKind::SendB) {
      const bool forward = a.kind == ActionKind::SendF;
      const std::uint64_t key = cell(a.stage, a.index) * 2 + !forward;
      if (sent_[key] != 0) return;  // a second SEND: its RECV took the first
      sent_[key] = static_cast<std::uint32_t>(at + 1);
      const std::int64_t peer = forward ? std::int64_t{a.stage} + 1 : std::int64_t{a.stage} - 1;
      if (peer < 0 || static_cast<std::size_t>(peer) >= owner_.size()) return;
      const std::uint32_t q = owner_[std::size_t(peer)];
      if (q < lanes_.size() && lanes_[q].waiting == key) {
        lanes_[q].waiting = kNoKey;
        work_.push_back(q);
        __builtin_prefetch(lanes_[q].next);  // its program is read next, after a while on other ranks
      }
    }
  }

  const Schedule& s_;
  const std::vector<std::uint32_t>& owner_;
  std::int64_t last_stage_;
  std::uint32_t mbs_;
  std::vector<std::uint8_t> done_;   ///< per (stage, microbatch): what the stage's owner ran
  std::vector<std::uint32_t> sent_;  ///< per (stage, microbatch, direction): 1 + the moment of its first SEND
  std::vector<bool> first_pass_;     ///< per step: some rank ran something in its first pass
  std::vector<Lane> lanes_;
  std::vector<std::uint32_t> work_;  ///< ranks to advance
  StepWaits out_;
};

}  // namespace

std::optional<StepWaits> step_waits_by_moments(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                               std::int64_t last_stage, std::uint32_t microbatches) {
  return MomentRun(s, stage_to_rank, last_stage, microbatches).run();
}

}  // namespace ppsched
