// step_waits_by_moments (step_moments.hpp): each rank's actions placed in program order, a RECV
// waiting until its SEND is placed. A schedule of a million steps or more is placed by two
// threads, each owning half of the ranks (ir/rank_halves.hpp); a RECV whose SEND is on the other
// half polls for it (halves_meeting.hpp).
#include "sim/step_moments.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>

#include "ir/rank_halves.hpp"
#include "passes/done_set.hpp"
#include "sim/halves_meeting.hpp"

namespace ppsched {

namespace {

constexpr std::uint32_t kNoKey = ~std::uint32_t{0};

// A moment of the loop: step * 2 + pass.
using Moment = std::uint64_t;

// The bits of a (stage, microbatch) cell: what its owner has run, as the lock-step loop's done-set.
constexpr std::uint8_t bit(ActionKind kind) { return DoneSet::bit(kind); }

struct Cannot {};  // thrown by a half: the fast way cannot go on (the lock-step loop decides)

class MomentRun {
 public:
  MomentRun(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank, std::int64_t last_stage,
            std::uint32_t microbatches)
      : s_(s), owner_(stage_to_rank), last_stage_(last_stage), mbs_(microbatches) {}

  std::optional<StepWaits> run(std::size_t split_at) {
    const std::size_t ranks = s_.rank_count(), stages = owner_.size();
    const std::size_t steps = s_.step_count();
    // Moments fit 32 bits (plus one for "not yet"), and the grids must be no larger than the schedule
    // (so a SEND's key, under 2 * (steps + 1024), fits 32 bits too).
    if (ranks == 0 || steps >= (std::size_t{1} << 30) || double(stages) * double(mbs_) > double(steps) + 1024)
      return std::nullopt;
    done_.assign(stages * mbs_, 0);
    sent_ = std::make_unique<std::atomic<std::uint32_t>[]>(stages * mbs_ * 2);
    lanes_.resize(ranks);
    bool any = false;
    for (std::uint32_t r = 0; r < ranks; ++r) {
      const auto& p = s_.ranks[r].actions;
      lanes_[r].begin = lanes_[r].next = p.data();
      lanes_[r].end = p.data() + p.size();
      // At most a wait per action. Grown by doubling, the waits were copied and touched twice; a
      // block this large is mapped on its own, and pages never written cost nothing.
      lanes_[r].waits.reserve(p.size());
      any = any || std::any_of(p.begin(), p.end(), [](const Action& a) { return !a.is_idle(); });
    }
    if (!any) return std::nullopt;  // PyTorch: not progressing, with no rank stuck
    mid_ = static_cast<std::uint32_t>(split_at > 0 && split_at < ranks ? split_at : second_half_start(s_));
    halves_[0].start(0, 0, mid_, steps);
    halves_[1].start(1, mid_, static_cast<std::uint32_t>(ranks), steps);
    if (mid_ == ranks) {
      try {
        run_half(halves_[0]);
      } catch (const Cannot&) {
        return std::nullopt;
      }
    } else {
      for (const std::exception_ptr& failed :
           meeting_.run([&] { run_half(halves_[0]); }, [&] { run_half(halves_[1]); })) {
        if (!failed) continue;
        try {
          std::rethrow_exception(failed);
        } catch (const Cannot&) {
          return std::nullopt;
        }
      }
    }
    std::int64_t last = -1;
    for (const Lane& lane : lanes_) last = std::max<std::int64_t>(last, lane.prev_step);
    // PyTorch stops at the first step in which no rank ran anything in its first pass. (Here that
    // cannot happen: a SEND waits only on its own rank, so it runs in a first pass, and a RECV in
    // the step of its SEND or the one after. It is checked all the same.)
    for (std::int64_t t = 0; t <= last; ++t)
      if (!halves_[0].first_pass[std::size_t(t)] && !halves_[1].first_pass[std::size_t(t)]) return std::nullopt;
    StepWaits out;
    out.waits.resize(ranks);
    out.cells.resize(ranks);
    for (std::size_t r = 0; r < ranks; ++r) {
      out.waits[r] = std::move(lanes_[r].waits);
      out.cells[r] = lanes_[r].cells;
    }
    return out;
  }

 private:
  // A rank's progress and result so far. A cache line each, as a half's own: the two halves
  // write their lanes at every action, and a line shared across the split would pass between the
  // cores each time. Steps, cells and keys fit 32 bits, as run() checks.
  struct alignas(64) Lane {
    const Action* begin = nullptr;
    const Action* next = nullptr;
    const Action* end = nullptr;
    std::int32_t prev_step = -1;     ///< the step of its last action run
    std::uint32_t cells = 0;         ///< its timeline's length so far
    std::uint32_t waiting = kNoKey;  ///< the SEND (sent_ index) its head waits for
    std::vector<StepWait> waits;
  };
  static_assert(sizeof(Lane) == 64);
  struct Poll {
    std::uint32_t rank;
    std::uint64_t key;
  };
  // What one thread owns: its ranks, which of them to advance, those that wait for the other half
  // (a cache line apart from the other's, as the lanes).
  struct alignas(64) Half {
    std::uint32_t index = 0;  ///< 0: the first half, on the calling thread
    std::uint32_t begin = 0, end = 0;
    std::vector<std::uint32_t> work;
    std::vector<Poll> polls;
    std::vector<bool> first_pass;  ///< per step: one of its ranks ran something in a first pass
    std::uint64_t written = 0;     ///< SENDs placed for a RECV on the other half
    void start(std::uint32_t i, std::uint32_t b, std::uint32_t e, std::size_t steps) {
      index = i;
      begin = b;
      end = e;
      first_pass.assign(steps + 1, false);
    }
    // Its work list, pushed and popped at every few actions: allocated by the thread that runs the
    // half, as a block of its own (16 KB), not among the small blocks the other thread writes all
    // through the run (its lanes' waits), whose cache lines the two cores would pass back and
    // forth (BM_StepWaits1f1b on two threads 56-59 -> 50-53 ms; either change alone did part).
    void list_its_ranks() {
      work.reserve(std::max<std::size_t>(end - begin, 4096));
      for (std::uint32_t r = begin; r < end; ++r) work.push_back(r);
    }
    bool holds(std::uint32_t rank) const { return rank >= begin && rank < end; }
  };

  bool owns(std::int64_t stage, std::uint32_t rank) const {
    return stage >= 0 && static_cast<std::size_t>(stage) < owner_.size() && owner_[std::size_t(stage)] == rank;
  }
  // Stage-major: the cells a half writes (its ranks' stages) are apart from the other half's.
  std::size_t cell(std::int64_t stage, std::uint32_t m) const { return std::size_t(stage) * mbs_ + m; }
  bool done(std::int64_t stage, std::uint32_t m, ActionKind kind) const { return done_[cell(stage, m)] & bit(kind); }

  // Advances the half's ranks until none can move, then polls what it waits for on the other
  // half until something comes or the meeting says neither half can move (Cannot).
  void run_half(Half& h) {
    h.list_its_ranks();
    const bool finished = meeting_.run_half(
        h.index, h.written,
        [&] {
          while (!h.work.empty()) {
            const std::uint32_t r = h.work.back();
            h.work.pop_back();
            advance(h, r);
          }
        },
        [&] { return poll(h); }, [&] { return !h.polls.empty(); },
        [&] {
          for (std::uint32_t r = h.begin; r < h.end; ++r)
            if (lanes_[r].next != lanes_[r].end) return false;
          return true;
        });
    if (!finished) throw Cannot{};
  }

  // Moves the ranks whose SEND the other half has placed to the work list.
  bool poll(Half& h) {
    bool moved = false;
    for (std::size_t i = 0; i < h.polls.size();) {
      if (sent_[h.polls[i].key].load(std::memory_order_acquire) == 0) {
        ++i;
        continue;
      }
      lanes_[h.polls[i].rank].waiting = kNoKey;
      h.work.push_back(h.polls[i].rank);
      h.polls[i] = h.polls.back();
      h.polls.pop_back();
      moved = true;
    }
    return moved;
  }

  // Places rank r's actions until one waits for a SEND not placed yet, or throws Cannot.
  void advance(Half& h, std::uint32_t r) {
    Lane& lane = lanes_[r];
    while (lane.next != lane.end) {
      const Action a = *lane.next;
      if (a.is_idle()) {  // the input's idle steps are dropped
        ++lane.next;
        continue;
      }
      // PyTorch first looks up the owner of the action's stage, whatever the kind.
      if (a.is_container() || !owns(a.stage, r)) throw Cannot{};
      const std::int64_t s = a.stage;
      const std::uint32_t m = a.index;
      if (takes_microbatch(a.kind) && m >= mbs_) throw Cannot{};
      Moment at = Moment(lane.prev_step + 1) * 2;
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
            throw Cannot{};  // PyTorch's KeyError
          const std::uint32_t q = owner_[std::size_t(peer)];
          if (q == r) {
            ready = done(peer, m, forward ? ActionKind::SendF : ActionKind::SendB);
            break;
          }
          const std::uint64_t key = cell(peer, m) * 2 + !forward;
          const std::uint32_t sent = sent_[key].load(std::memory_order_acquire);
          if (sent == 0) {
            lane.waiting = static_cast<std::uint32_t>(key);
            if (!h.holds(q)) h.polls.push_back({r, key});
            return;
          }
          at = std::max(at, seen_at(sent - 1, q, r));
          break;
        }
        case ActionKind::W:
        case ActionKind::Unshard:
        case ActionKind::Reshard:
        case ActionKind::ReduceGrad:
          break;
        default:
          throw Cannot{};
      }
      if (!ready) throw Cannot{};  // waits on its own rank for what never comes: a deadlock
      if ((at >> 1) >= h.first_pass.size()) throw Cannot{};
      place(h, lane, a, at);
    }
  }

  // The first check of rank r that sees what rank q ran at moment x: later in the same pass
  // (q < r), else in the pass after (the step's second, or the next step's first).
  static Moment seen_at(Moment x, std::uint32_t q, std::uint32_t r) { return q < r ? x : x + 1; }

  void place(Half& h, Lane& lane, const Action& a, Moment at) {
    const std::int64_t t = static_cast<std::int64_t>(at >> 1);
    const std::int64_t idle = t - (lane.prev_step + 1);
    if (idle > 0)
      lane.waits.push_back({static_cast<std::uint32_t>(lane.next - lane.begin), static_cast<std::uint32_t>(idle)});
    lane.cells += static_cast<std::uint32_t>(idle) + 1;
    if ((at & 1) == 0) h.first_pass[static_cast<std::size_t>(t)] = true;
    lane.prev_step = static_cast<std::int32_t>(t);
    ++lane.next;
    if (a.kind >= ActionKind::F && a.kind <= ActionKind::RecvB) done_[cell(a.stage, a.index)] |= bit(a.kind);
    if (a.kind != ActionKind::SendF && a.kind != ActionKind::SendB) return;
    const bool forward = a.kind == ActionKind::SendF;
    const std::uint64_t key = cell(a.stage, a.index) * 2 + !forward;
    if (sent_[key].load(std::memory_order_relaxed) != 0) return;  // a second SEND: its RECV took the first
    sent_[key].store(static_cast<std::uint32_t>(at + 1), std::memory_order_release);
    const std::int64_t peer = forward ? std::int64_t{a.stage} + 1 : std::int64_t{a.stage} - 1;
    if (peer < 0 || static_cast<std::size_t>(peer) >= owner_.size()) return;
    const std::uint32_t q = owner_[std::size_t(peer)];
    if (q >= lanes_.size()) return;
    if (!h.holds(q)) {
      ++h.written;  // the other half polls for it
      return;
    }
    if (lanes_[q].waiting == key) {
      lanes_[q].waiting = kNoKey;
      h.work.push_back(q);
      __builtin_prefetch(lanes_[q].next);  // its program is read next, after a while on other ranks
    }
  }

  const Schedule& s_;
  const std::vector<std::uint32_t>& owner_;
  std::int64_t last_stage_;
  std::uint32_t mbs_;
  std::vector<std::uint8_t> done_;  ///< per (stage, microbatch): what the stage's owner ran
  /// Per (stage, microbatch, direction): 1 + the moment of its first SEND; 0: not yet.
  std::unique_ptr<std::atomic<std::uint32_t>[]> sent_;
  std::vector<Lane> lanes_;
  std::uint32_t mid_ = 0;  ///< the second half's first rank (the rank count: one half)
  Half halves_[2];
  HalvesMeeting meeting_;
};

}  // namespace

std::optional<StepWaits> step_waits_by_moments(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                               std::int64_t last_stage, std::uint32_t microbatches,
                                               std::size_t split_at) {
  return MomentRun(s, stage_to_rank, last_stage, microbatches).run(split_at);
}

}  // namespace ppsched
