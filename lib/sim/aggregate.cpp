// simulate_aggregates (aggregate.hpp): the timed model of timed.cpp with the Timeline replaced by
// running aggregates and the dense event table replaced by a ring.
//
// How it differs from timed.cpp, and why the numbers are still the same:
//   - An event cell holds only the event's time (NaN: not yet). Nothing per action is stored.
//   - Cells live in a ring of `window_` microbatches. Every dependency of the model joins two
//     actions of the same microbatch, so an event of microbatch m is dead once no unfinished
//     action names m. `remaining_[m]` counts those actions and `lo_` is the smallest m still
//     named. Any cell touched has lo_ <= m (its reader or writer is unfinished). The ring
//     doubles when m >= lo_ + window_, so a cell is reused only for a dead microbatch.
//   - Nothing keeps lists of waiters. The consumers of an event, and the partner of a SEND or
//     RECV, are found by placement: the scan checked that every action sits on its stage's rank.
//   - Eager sends (TimedOptions::send): an eager SEND finishes at once and, when its RECV is not
//     at the head of its queue yet, leaves its data's arrival in a second ring (sent_) for the
//     RECV to find when it is posted. Only an eager run allocates it, so the rendezvous run's
//     layout and loops are as they were.
//   - Streams are woken in another order than timed.cpp's. When every event is raised once, an
//     action's start is the latest of a fixed set of times and does not depend on that order.
//     An event raised twice (a duplicated action) falls back to the Timeline path.
//   - A finished action is folded at once into the per-rank aggregates of analyze() and the
//     memory accounting of compute_memory(), in the order those functions visit it.
// The Timeline path, analyze(simulate_timed(...)), also takes what the ring does not handle: a
// stage placed off its rank, a malformed comm, a microbatch grid too sparse for a per-microbatch
// count, comms on split communicator queues (TimedOptions::p2p_queues), and a stuck run (to name
// the stuck actions).
#include "sim/aggregate.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>

#include "ir/rank_halves.hpp"
#include "passes/key_table.hpp"
#include "sim/halves_meeting.hpp"
#include "sim/timed_rules.hpp"

namespace ppsched {

namespace {

constexpr std::uint32_t kNone = 0xFFFFFFFF;
constexpr std::uint64_t kNoKey = ~std::uint64_t{0};
constexpr std::uint64_t kPartner = kNoKey - 1;  ///< a posted SEND/RECV waiting for its partner
constexpr std::uint64_t kPolling = kNoKey - 2;  ///< waiting for the other half (two threads), polled
// The events a consumer waits for: a forward's or a backward's end, and a receive's end.
enum KeyKind : std::uint32_t { kF, kBwd, kRecvF, kRecvB, kKeyKinds };
enum HeadState : std::uint8_t { kNew, kPosted, kDone };
const double kAbsent = std::numeric_limits<double>::quiet_NaN();
constexpr std::uint32_t kQueues = 2;  // compute, and all point-to-point comms (timed.cpp)

struct Fallback {};  // thrown inside the run: a case it does not handle; use the Timeline path
struct Stuck {};     // thrown at the end of the run: the schedule cannot finish

// What two halves of a run (two threads, each owning a contiguous block of ranks) tell each other.
// Cells are dense per microbatch (NaN: not yet) and each is written once, by its owner's half:
//   - events: the end of a forward (kF) or backward (kBwd) of a stage whose neighbour stage sits
//     on the other half, when the schedule has no explicit comms (the neighbour's compute waits
//     for it directly; with explicit comms it waits for its own RECV instead);
//   - posts: when a SEND, and its RECV, were posted, for each (SEND's stage, direction) whose
//     partner stage sits on the other half. Each side pairs itself once it sees the other's post.
// The halves wait for those cells, and decide whether they are stuck, as halves_meeting.hpp says.
struct CrossHalves {
  std::uint32_t mid = 0;                 ///< the second half's first rank
  std::vector<std::int32_t> event_slot;  ///< by stage: its slot in `events`, or -1
  std::vector<std::int32_t> pair_slot;   ///< by SEND stage * 2 + forward: its slot in `posts`, or -1
  std::size_t event_slots = 0, pair_slots = 0;
  std::unique_ptr<std::atomic<double>[]> events, posts;
  HalvesMeeting meeting;

  std::atomic<double>& event(std::int32_t slot, bool backward, std::uint32_t mb) {
    return events[(std::size_t{mb} * event_slots + std::size_t(slot)) * 2 + backward];
  }
  std::atomic<double>& post(std::int32_t slot, bool send_side, std::uint32_t mb) {
    return posts[(std::size_t{mb} * pair_slots + std::size_t(slot)) * 2 + send_side];
  }
};

// Who released an action, as much of it as analyze() looks at (split_idle_gap). Two aligned 8-byte
// words, written and read whole: a By is copied on every step, and field-wise stores followed by a
// wider load stall store forwarding, which costs a noticeable share of the run (docs/bench.md,
// "Figures behind the simulator's choices").
struct By {
  double end = 0;
  std::uint64_t rank_cls = std::uint64_t{kNone};  ///< rank in the low 32 bits, the cause above
  By() = default;
  By(double e, std::uint32_t rank, ReleaseCause cls) : end(e), rank_cls(rank | (std::uint64_t(cls) << 32)) {}
  std::uint32_t rank() const { return static_cast<std::uint32_t>(rank_cls); }
  ReleaseCause cls() const { return static_cast<ReleaseCause>(rank_cls >> 32); }
};

// The time a dependency is met and who met it; the rule of timed.cpp's Ready::take.
struct Ready {
  double time = 0;
  By by;
  void take(double t, const By& b) {
    if (by.cls() == ReleaseCause::None ? t >= time : t > time) {
      time = t;
      by = b;
    }
  }
};

struct MemEvent {
  double time;
  double delta;
};

struct Stream {
  const Action* program = nullptr;
  std::uint32_t cursor = kNone, size = 0;  ///< head: program[cursor]; kNone when done
  std::uint8_t head = kNew;                ///< the head's progress
  std::uint64_t waiting_on = kNoKey;       ///< the event it waits for, kPartner, or kNoKey
  double head_start = 0, head_end = 0;
  double head_transfer = 0;                    ///< a SEND/RECV head: when its transfer began
  By head_by;                                  ///< what released the head
  double free_at = 0;                          ///< when the previous action on this stream ended
  double last_by_end = 0;                      ///< that action's By::end: free_at, or a comm's transfer begin
  ReleaseCause last_cls = ReleaseCause::None;  ///< that action as a releaser (None before the first)
  bool cross_posted = false;                   ///< its posted head's post is in CrossHalves (two threads)
};

struct RankFold {
  RankUsage usage;
  std::uint32_t first_step = kNone;  ///< program index of the earliest action folded so far
  bool any = false;
  double prev_end = 0;
  double level = 0, peak = 0, peak_time = 0;
  std::vector<MemEvent> pending;  ///< memory events at or after the last flushed time
};

class AggregateRun {
 public:
  AggregateRun(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank, const TimedOptions& opt,
               const MemoryModel& memory, const LeafCensus* census)
      : s_(s), placement_(stage_to_rank), opt_(opt), memory_(memory), census_(census) {}

  std::uint32_t window() const { return window_; }
  bool two_threads() const { return cross_ != nullptr; }
  bool read_census() const { return read_census_; }

  /// Split at the scan's rank halves (ir/rank_halves.hpp).
  static constexpr std::size_t kSplitAsHalves = ~std::size_t{0};

  /// The whole run, split between two threads at rank `split_at` when the schedule allows it
  /// (one thread when split_at is 0 or rank_count()). Throws Stuck or Fallback. Nullopt when the
  /// two halves could not decide (one was stuck, or met a case it does not handle): the caller
  /// runs again, on one thread, with a fresh AggregateRun.
  std::optional<SimAnalysis> run(std::size_t split_at) {
    prepare();
    const std::size_t R = s_.rank_count();
    if (split_at == kSplitAsHalves) split_at = scan_mid_;
    if (split_at > 0 && split_at < R && plain_ && !eager_) {
      auto cross = std::make_unique<CrossHalves>();
      if (share_across(*cross, static_cast<std::uint32_t>(split_at))) return run_two_halves(*cross);
    }
    start(0, R);
    while (work_size_ > 0) {
      const std::uint32_t id = work_[--work_size_];
      advance(id);
    }
    for (const Stream& st : streams_)
      if (st.cursor != kNone) throw Stuck{};
    return finish_analysis();
  }

 private:
  // What every run needs before it starts: the scan, the queue table, the modes.
  void prepare() {
    scan();
    fill_queue_table();
    plain_ = plain_ && !opt_.blocking_comms;
    // In order: with one compute queue per rank and every compute cost positive, a rank's memory
    // events come in the order compute_memory sorts them (F allocates at its start, which is at or
    // after every earlier end; the others free at their end, after their start; the one tie
    // possible, an end with the next start, puts the free first either way), so they are applied
    // as they come, without the pending list.
    in_order_memory_ = plain_;
    for (std::uint32_t st = 0; st < stages_ && in_order_memory_; ++st)
      for (ActionKind k : {ActionKind::F, ActionKind::I, ActionKind::W, ActionKind::B})
        in_order_memory_ = in_order_memory_ && opt_.costs.cost(static_cast<std::uint16_t>(st), k) > 0;
    eager_ = opt_.send.eager();
  }

  // Sets the run up for the streams of ranks [begin, end), which remaining_ counts. The other
  // ranks' streams stay finished and never wait, so nothing here ever wakes them.
  void start(std::size_t begin, std::size_t end) {
    const std::size_t R = s_.rank_count();
    own_begin_ = static_cast<std::uint32_t>(begin);
    own_end_ = static_cast<std::uint32_t>(end);
    streams_.resize(R * kQueues);
    work_.assign(streams_.size() + 1, 0);  // a stream is on the list at most once
    for (auto r = static_cast<std::uint32_t>(begin); r < end; ++r)
      for (std::uint32_t q = 0; q < kQueues; ++q) {
        Stream& st = streams_[r * kQueues + q];
        st.program = s_.ranks[r].actions.data();
        st.size = static_cast<std::uint32_t>(s_.ranks[r].actions.size());
        st.cursor = next_on_queue(st, q, 0);
        work_[work_size_++] = r * kQueues + q;
      }
    window_ = 16;
    while (window_ < 2 * R && window_ < microbatches_) window_ *= 2;
    row_ = std::size_t{stages_} * kKeyKinds;
    ring_.assign(window_ * row_, kAbsent);
    if (eager_) sent_.assign(window_ * sent_row(), kAbsent);
    transfer_.assign(window_ * transfer_row(), kAbsent);
    folds_.resize(R);
    for (std::size_t r = 0; r < R; ++r) {
      double base = r < memory_.fixed_per_rank.size() ? memory_.fixed_per_rank[r] : 0.0;
      folds_[r].level = folds_[r].peak = base;
    }
    lo_ = 0;
    while (lo_ < microbatches_ && remaining_[lo_] == 0) ++lo_;
    foreign_stage_.assign(stages_, 0);
    for (std::uint32_t st = 0; st < stages_ && cross_; ++st)
      foreign_stage_[st] = placement_[st] < begin || placement_[st] >= end;
  }

  // Two threads ------------------------------------------------------------------------------

  // Fills `c` for a split at rank `mid`: which events and posts cross between the halves. False
  // when its table would be large next to the schedule (more than 2 bytes per step): one thread.
  bool share_across(CrossHalves& c, std::uint32_t mid) const {
    auto second = [&](std::int64_t st) { return placement_[std::size_t(st)] >= mid; };
    c.mid = mid;
    c.event_slot.assign(stages_, -1);
    c.pair_slot.assign(std::size_t{stages_} * 2, -1);
    for (std::uint32_t st = 0; st < stages_; ++st) {
      if (!explicit_comms_) {
        const bool crosses =
            (st > 0 && second(st - 1) != second(st)) || (st + 1 < stages_ && second(st + 1) != second(st));
        if (crosses) c.event_slot[st] = static_cast<std::int32_t>(c.event_slots++);
        continue;
      }
      for (int forward = 0; forward < 2; ++forward) {
        const std::int64_t partner = forward ? std::int64_t{st} + 1 : std::int64_t{st} - 1;
        if (partner >= 0 && partner < stages_ && second(partner) != second(st))
          c.pair_slot[std::size_t{st} * 2 + std::size_t(forward)] = static_cast<std::int32_t>(c.pair_slots++);
      }
    }
    const std::size_t events = std::size_t{microbatches_} * c.event_slots * 2;
    const std::size_t posts = std::size_t{microbatches_} * c.pair_slots * 2;
    if (8 * (events + posts) > std::max<std::size_t>(std::size_t{1} << 20, 2 * s_.step_count())) return false;
    c.events = std::make_unique<std::atomic<double>[]>(events);
    c.posts = std::make_unique<std::atomic<double>[]>(posts);
    for (std::size_t i = 0; i < events; ++i) c.events[i].store(kAbsent, std::memory_order_relaxed);
    for (std::size_t i = 0; i < posts; ++i) c.posts[i].store(kAbsent, std::memory_order_relaxed);
    return true;
  }

  // This run takes ranks [0, mid) on the calling thread and a copy of it ranks [mid, R) on a
  // second one; their folds are merged by rank.
  std::optional<SimAnalysis> run_two_halves(CrossHalves& c) {
    const std::size_t R = s_.rank_count();
    AggregateRun second(*this);
    second.remaining_ = microbatch_counts(c.mid, R);
    for (std::size_t m = 0; m < remaining_.size(); ++m) remaining_[m] -= second.remaining_[m];
    cross_ = second.cross_ = &c;
    half_ = 0;
    second.half_ = 1;
    start(0, c.mid);
    second.start(c.mid, R);
    const auto failed = c.meeting.run([&] { run_half(); }, [&] { second.run_half(); });
    bool decided = true;
    for (const std::exception_ptr& f : failed) {
      if (!f) continue;
      try {
        std::rethrow_exception(f);
      } catch (const Stuck&) {
        decided = false;
      } catch (const Fallback&) {
        decided = false;
      }
    }
    if (!decided) return std::nullopt;
    for (std::size_t r = c.mid; r < R; ++r) folds_[r] = std::move(second.folds_[r]);
    window_ = std::max(window_, second.window_);
    return finish_analysis();
  }

  // How many leaves of ranks [begin, end) name each microbatch (the scan's count, for one half).
  std::vector<std::uint32_t> microbatch_counts(std::size_t begin, std::size_t end) const {
    if (begin == scan_mid_ && end == s_.rank_count()) return second_counts_;
    std::vector<std::uint32_t> counts(remaining_.size(), 0);
    for (std::size_t r = begin; r < end; ++r)
      for (const Action& a : s_.ranks[r].actions)
        if (a.has_microbatch()) ++counts[a.microbatch()];  // plain_: no container
    return counts;
  }

  // One half's loop: its own work, then the streams that wait for the other half, polled until
  // one can move or the meeting says neither half can (halves_meeting.hpp).
  void run_half() {
    const bool finished = cross_->meeting.run_half(
        half_, written_,
        [&] {
          while (work_size_ > 0) {
            const std::uint32_t id = work_[--work_size_];
            advance(id);
          }
        },
        [&] { return poll(); }, [&] { return !polls_.empty(); },
        [&] {
          for (std::uint32_t id = own_begin_ * kQueues; id < own_end_ * kQueues; ++id)
            if (streams_[id].cursor != kNone) return false;
          return true;
        });
    if (!finished) throw Stuck{};  // or the other half failed: either way the one-thread run decides
  }

  // A cell for the other half: released with its value; counted for run_half's verdict.
  void publish(std::atomic<double>& cell, double value) {
    cell.store(value, std::memory_order_release);
    ++written_;
  }

  // Moves the streams whose awaited cell the other half has written to the work list.
  bool poll() {
    bool moved = false;
    for (std::size_t i = 0; i < polls_.size();) {
      if (absent(polls_[i].cell->load(std::memory_order_acquire))) {
        ++i;
        continue;
      }
      streams_[polls_[i].id].waiting_on = kNoKey;
      work_[work_size_++] = polls_[i].id;
      polls_[i] = polls_.back();
      polls_.pop_back();
      moved = true;
    }
    return moved;
  }

  // The stream waits for `k`; for kPolling, the cell in poll_cell_.
  void block(Stream& st, std::uint32_t id, std::uint64_t k) {
    st.waiting_on = k;
    if (k == kPolling) [[unlikely]]
      polls_.push_back({id, poll_cell_});
  }

  // A posted SEND or RECV whose partner stage sits on the other half: post it there once, then
  // pair when the other side's post is there. Both sides compute the same begin and end; the
  // RECV's side raises its event.
  bool cross_pair(Stream& st, std::uint32_t rank, std::uint32_t own_stage, std::uint32_t send_stage, std::uint32_t m,
                  bool forward, bool is_send, std::uint32_t other_rank) {
    const std::int32_t slot = cross_->pair_slot[std::size_t{send_stage} * 2 + forward];
    if (slot < 0) throw Fallback{};
    if (!st.cross_posted) {
      std::atomic<double>& mine = cross_->post(slot, is_send, m);
      if (!absent(mine.load(std::memory_order_relaxed))) throw Fallback{};  // posted twice: a duplicated action
      publish(mine, st.head_start);
      st.cross_posted = true;
      // Both sides store their post, then load the other's: the fence makes at least one see both.
      std::atomic_thread_fence(std::memory_order_seq_cst);
    }
    std::atomic<double>& theirs = cross_->post(slot, !is_send, m);
    const double their_post = theirs.load(std::memory_order_acquire);
    if (absent(their_post)) {
      poll_cell_ = &theirs;
      block(st, static_cast<std::uint32_t>(&st - streams_.data()), kPolling);
      return false;
    }
    st.cross_posted = false;
    const double begin = std::max(st.head_start, their_post);
    const double end = begin + (is_send ? transfer(send_stage, forward, rank, other_rank)
                                        : transfer(send_stage, forward, other_rank, rank));
    st.head = kDone;
    st.head_end = end;
    st.head_transfer = begin;
    if (!is_send) {
      const KeyKind k = forward ? kRecvF : kRecvB;
      transfer_cell(k, own_stage, m) = begin;
      raise(k, own_stage, m, end);
    }
    return true;
  }
  // What one half of the ranks holds (scan()).
  struct ScanHalf {
    std::vector<std::uint32_t> counts = std::vector<std::uint32_t>(1024, 0);  ///< actions per microbatch
    std::uint32_t max_stage = 0;
    bool any_stage = false, bad = false, explicit_comms = false, plain = true;
  };
  void scan_ranks(std::size_t begin, std::size_t end, double limit, ScanHalf& out) const {
    const std::size_t placed = placement_.size();
    std::uint32_t* counts = out.counts.data();
    std::size_t counted = out.counts.size();
    auto count = [&](std::uint32_t m, std::uint32_t n) {
      if (m >= counted) [[unlikely]] {
        if (double(m) >= limit) throw Fallback{};
        out.counts.resize(std::max<std::size_t>(std::size_t{m} + 1, 2 * counted), 0);
        counts = out.counts.data();
        counted = out.counts.size();
      }
      counts[m] += n;
    };
    // Problems are or-ed into `bad` and checked once. This loop runs once per action, so a
    // stage's placement is checked when a rank's stage changes, not on every action, and a run of
    // actions naming one microbatch (a compute and its comms) is counted once.
    std::uint32_t checked_stage = kNone, run_mb = kNone, run = 0;
    auto place = [&](const Action& a, std::uint32_t rank) {
      if (!a.has_stage()) {
        out.bad |= is_send_recv(a.kind) && a.has_microbatch();  // a comm with nothing to say where
      } else {
        out.any_stage = true;
        out.max_stage = std::max<std::uint32_t>(out.max_stage, a.stage);
        out.bad |= a.stage >= placed || placement_[a.stage] != rank;
        checked_stage = a.stage;
      }
    };
    auto leaf = [&](const Action& a, std::uint32_t rank) {
      if (a.stage != checked_stage) place(a, rank);
      if (a.index == Action::kNoMicrobatch) return;
      if (a.index == run_mb) {
        ++run;
        return;
      }
      if (run) count(run_mb, run);
      run_mb = a.index;
      run = 1;
    };
    bool comms = false;
    for (auto rank = static_cast<std::uint32_t>(begin); rank < end; ++rank) {
      checked_stage = kNone;
      for (const Action& a : s_.ranks[rank].actions) {
        if (a.is_container()) [[unlikely]] {
          out.plain = false;
          for (const Action& sub : s_.subs(a)) {
            if (!sub.is_container())
              leaf(sub, rank);
            else if (sub.stage != checked_stage)
              place(sub, rank);
          }
          continue;
        }
        if (a.is_idle()) continue;
        comms |= is_send_recv(a.kind);
        leaf(a, rank);
      }
    }
    if (run) count(run_mb, run);
    out.explicit_comms = comms;
  }

  // What scan_ranks would find, read off a census instead of the actions (leaf_census.hpp): the
  // counts of each half are those of the stages placed on it. False, having changed nothing, when
  // the census cannot stand for this run (another placement, a grid past the limit).
  bool scan_census(const LeafCensus& c, double limit, ScanHalf halves[2]) {
    const std::size_t mbs = c.microbatches;
    if (c.kinds.size() != std::size_t{c.stages} * mbs || c.stage_rank.size() < c.stages) return false;
    if (placement_.size() < c.stages || double(mbs) > limit) return false;
    for (std::uint32_t st = 0; st < c.stages; ++st)
      if (placement_[st] != c.stage_rank[st]) return false;
    const std::size_t mid = second_half_start(s_);
    ScanHalf& first = halves[0];
    ScanHalf& second = halves[1];
    first.counts.assign(mbs, 0);
    second.counts.assign(mid < s_.rank_count() ? mbs : 0, 0);
    for (std::uint32_t st = 0; st < c.stages; ++st) {
      const std::uint8_t* row = c.kinds.data() + std::size_t{st} * mbs;
      if (c.stage_rank[st] >= s_.rank_count()) {  // a stage no rank runs has no leaf
        if (std::any_of(row, row + mbs, [](std::uint8_t k) { return k != 0; })) return false;
        continue;
      }
      std::uint32_t* counts = (c.stage_rank[st] >= mid ? second : first).counts.data();
      for (std::size_t m = 0; m < mbs; ++m) counts[m] += static_cast<std::uint32_t>(std::popcount(row[m]));
    }
    first.any_stage = c.any_stage;
    first.max_stage = c.max_stage;
    first.explicit_comms = c.explicit_comms;
    first.plain = !c.containers;
    scan_mid_ = mid;
    return true;
  }

  // One pass over the leaves: sizes (as timed.cpp and compute_memory infer them), whether comms
  // are explicit, how many actions name each microbatch, and whether every action sits on the
  // rank its stage is placed on (the event producers and comm partners are found by placement).
  void scan() {
    const double limit = dense_grid_limit(s_.step_count());  // the bound of timed.cpp's dense event table
    // Each half of the ranks on its own thread (ir/rank_halves.hpp), its counts apart; summed after.
    ScanHalf halves[2];
    read_census_ = census_ && scan_census(*census_, limit, halves);
    if (!read_census_)
      for_rank_halves(s_, [&](std::size_t half, std::size_t begin, std::size_t end) {
        scan_ranks(begin, end, limit, halves[half]);
        if (half == 1) scan_mid_ = begin;
      });
    ScanHalf& all = halves[0];
    const ScanHalf& other = halves[1];
    if (scan_mid_ < s_.rank_count()) second_counts_ = other.counts;
    if (other.counts.size() > all.counts.size()) all.counts.resize(other.counts.size(), 0);
    for (std::size_t m = 0; m < other.counts.size(); ++m) all.counts[m] += other.counts[m];
    all.max_stage = std::max(all.max_stage, other.max_stage);
    all.any_stage |= other.any_stage;
    all.bad |= other.bad;
    explicit_comms_ = all.explicit_comms || other.explicit_comms;
    plain_ = all.plain && other.plain;
    remaining_ = std::move(all.counts);
    const std::uint32_t max_stage = all.max_stage;
    const bool any_stage = all.any_stage, bad = all.bad;
    const std::uint32_t* counts = remaining_.data();
    const std::size_t counted = remaining_.size();
    std::size_t top = counted;
    while (top > 0 && counts[top - 1] == 0) --top;
    const bool any_mb = top > 0;
    const std::uint32_t max_mb = any_mb ? static_cast<std::uint32_t>(top - 1) : 0;
    if (bad) throw Fallback{};
    // Split communicator queues (p2p_queues.hpp) make a rank's queue count vary; the ring keeps
    // two streams per rank, so such a run takes the Timeline path (docs/bench.md says what it costs).
    if (explicit_comms_ && !opt_.blocking_comms && opt_.p2p_queues != P2pQueues::PerRank) throw Fallback{};
    const std::uint32_t inferred_stages = any_stage ? max_stage + 1 : 0;
    stages_ = std::max<std::uint32_t>(s_.num_stages, inferred_stages);
    microbatches_ = std::max<std::uint32_t>(s_.num_microbatches, any_mb ? max_mb + 1 : 0);
    if (double(stages_) * double(microbatches_) > limit) throw Fallback{};
    // Consumers are looked up on the ranks of an event's stage and its neighbours: every stage
    // must be placed on a rank that exists.
    if (placement_.size() < stages_) throw Fallback{};
    for (std::uint32_t st = 0; st < stages_; ++st)
      if (placement_[st] >= s_.rank_count()) throw Fallback{};
    remaining_.resize(std::size_t{microbatches_} + 1, 0);
    second_counts_.resize(remaining_.size(), 0);
    // compute_memory's sizes use the stated stage count, else the inferred one.
    const std::uint32_t mem_stages = s_.num_stages ? s_.num_stages : inferred_stages;
    act_.resize(stages_);
    wgt_.resize(stages_);
    for (std::uint32_t st = 0; st < stages_; ++st) {
      act_[st] = memory_.activation_of(st, s_.rank_count(), mem_stages);
      wgt_[st] = memory_.weight_grad_of(st, s_.rank_count(), mem_stages);
    }
  }

  // The queue each kind runs on (2: none, for idle steps), by ActionKind.
  void fill_queue_table() {
    for (int k = 0; k < kActionKindCount; ++k) {
      const auto kind = static_cast<ActionKind>(k);
      queue_of_[k] = kind == ActionKind::Idle ? 2 : (!opt_.blocking_comms && is_send_recv(kind)) ? 1 : 0;
    }
  }
  [[gnu::always_inline]] inline std::uint32_t next_on_queue(const Stream& st, std::uint32_t q,
                                                            std::uint32_t from) const {
    for (std::uint32_t i = from; i < st.size; ++i)
      if (queue_of_[static_cast<std::size_t>(st.program[i].kind)] == q) return i;
    return kNone;
  }

  // An event's identity, for a stream to say what it waits for. Only called with a stage and
  // microbatch inside the pipeline (the callers check the neighbours they derive; the scan
  // sized the pipeline to hold every action's own).
  static std::uint64_t key(KeyKind kind, std::uint32_t stage, std::uint32_t mb) {
    return (std::uint64_t{mb} << 18) | (std::uint64_t{stage} << 2) | kind;
  }
  // The ring cell of an event: its microbatch's row, reduced modulo the window. lo_ <= mb always
  // holds, since the reader or writer is an unfinished action that names mb.
  [[gnu::always_inline]] inline double& cell(KeyKind kind, std::uint32_t stage, std::uint32_t mb) {
    if (mb - lo_ >= window_) grow(mb);
    return ring_[std::size_t{mb & (window_ - 1)} * row_ + std::size_t{stage} * kKeyKinds + kind];
  }

  void grow(std::uint32_t mb) {
    // Neither can happen (see cell()), but a wrong guess here must not become an endless loop.
    if (mb < lo_ || mb - lo_ >= (1u << 31)) throw Fallback{};
    std::uint32_t w = window_;
    while (mb - lo_ >= w) w *= 2;
    auto regrow = [&](std::vector<double>& ring, std::size_t row) {
      std::vector<double> next(std::size_t{w} * row, kAbsent);
      for (std::uint32_t m = lo_; m - lo_ < window_ && m < microbatches_; ++m)
        std::copy_n(ring.begin() + std::ptrdiff_t(std::size_t{m & (window_ - 1)} * row), row,
                    next.begin() + std::ptrdiff_t(std::size_t{m & (w - 1)} * row));
      ring = std::move(next);
    };
    regrow(ring_, row_);
    if (eager_) regrow(sent_, sent_row());
    regrow(transfer_, transfer_row());
    window_ = w;
  }

  static bool absent(double t) { return t != t; }  // NaN marks a cell with no event yet

  // Eager sends only: when the data of the eager SEND of (stage, microbatch, direction) arrives,
  // for its RECV to find when it is posted. A ring of its own, beside ring_, so that the events
  // of the default (rendezvous) run keep their layout.
  // Each holds the arrival (what = 0) and the SEND's post (what = 1).
  std::size_t sent_row() const { return std::size_t{stages_} * 4; }
  double& sent_cell(std::uint32_t send_stage, std::uint32_t mb, bool forward, std::uint32_t what = 0) {
    if (mb - lo_ >= window_) grow(mb);
    return sent_[std::size_t{mb & (window_ - 1)} * sent_row() + (std::size_t{send_stage} * 2 + forward) * 2 + what];
  }

  // When the transfer of a RECV event (kRecvF, kRecvB) began: what the bubble split counts as
  // transfer time before the compute it releases (split_idle_gap). A ring beside ring_, in step.
  std::size_t transfer_row() const { return std::size_t{stages_} * 2; }
  [[gnu::always_inline]] inline double& transfer_cell(KeyKind kind, std::uint32_t stage, std::uint32_t mb) {
    if (mb - lo_ >= window_) grow(mb);
    return transfer_[std::size_t{mb & (window_ - 1)} * transfer_row() + std::size_t{stage} * 2 + (kind == kRecvF)];
  }

  // Wakes the streams that wait for event `k` of `stage`. Who can consume an event is fixed by the
  // model, and the scan checked that every action sits on its stage's rank:
  //   kF(s)      B/I(s) on rank(s) compute, SEND_F(s) on rank(s) comm, F(s+1) on rank(s+1) compute
  //   kBwd(s)    W(s) on rank(s) compute, SEND_B(s) on rank(s) comm, B/I(s-1) on rank(s-1) compute
  //   kRecv*(s)  the compute of stage s on rank(s)
  // (with blocking comms, SEND/RECV run on the compute queue, which is checked anyway). A waiter
  // missed here would leave the run stuck, which falls back to the Timeline path: never wrong.
  [[gnu::always_inline]] inline void wake(KeyKind kind, std::uint64_t k, std::uint32_t stage) {
    const std::uint32_t own = placement_[stage] * kQueues;
    wake_one(own, k);
    if (kind == kRecvF || kind == kRecvB) return;
    wake_one(own + 1, k);
    if (kind == kF && stage + 1 < stages_) wake_one(placement_[stage + 1] * kQueues, k);
    if (kind == kBwd && stage > 0) wake_one(placement_[stage - 1] * kQueues, k);
  }
  // Branch-free: whether a stream waits for this event is unpredictable.
  [[gnu::always_inline]] inline void wake_one(std::uint32_t id, std::uint64_t k) {
    Stream& waiter = streams_[id];
    const bool match = waiter.waiting_on == k;
    work_[work_size_] = id;
    work_size_ += match;
    waiter.waiting_on = match ? kNoKey : waiter.waiting_on;
  }

  bool wait(Stream& st, std::uint64_t k) {
    block(st, static_cast<std::uint32_t>(&st - streams_.data()), k);
    return false;
  }

  // Needs the event done; `extra` (a transfer) is added to its time. Sets `missing_`.
  [[gnu::always_inline]] inline bool need_done(Ready& r, KeyKind kind, std::uint32_t stage, std::uint32_t mb,
                                               std::uint32_t producer, ReleaseCause cls, double extra = 0) {
    if (foreign_stage_[stage]) [[unlikely]]
      return need_from_other_half(r, kind, stage, mb, producer, cls, extra);
    const double t = cell(kind, stage, mb);
    if (absent(t)) {
      missing_ = key(kind, stage, mb);
      return false;
    }
    r.take(t + extra, By(cls == ReleaseCause::Comm ? transfer_cell(kind, stage, mb) : t, producer, cls));
    return true;
  }

  // need_done for the end of a compute on the other half (two threads, no explicit comms).
  bool need_from_other_half(Ready& r, KeyKind kind, std::uint32_t stage, std::uint32_t mb, std::uint32_t producer,
                            ReleaseCause cls, double extra) {
    const std::int32_t slot = cross_->event_slot[stage];
    if (slot < 0 || (kind != kF && kind != kBwd) || mb >= microbatches_) throw Fallback{};
    std::atomic<double>& c = cross_->event(slot, kind == kBwd, mb);
    const double t = c.load(std::memory_order_acquire);
    if (absent(t)) {
      missing_ = kPolling;
      poll_cell_ = &c;
      return false;
    }
    r.take(t + extra, By(t, producer, cls));
    return true;
  }

  double transfer(std::uint32_t stage, bool forward, std::uint32_t from, std::uint32_t to) const {
    if (!opt_.comm.topology) return 0.0;  // CommModel::transfer_time's answer without a topology
    return from == to ? 0.0 : opt_.comm.transfer_time(stage, forward, from, to);
  }

  // The model's dependencies of a compute (sub-)action on `rank`: calls need(kind, stage, m,
  // producer, cls, extra) for each event it needs, in order, and stops at the first one that is
  // not there yet (need returns false). Both compute loops take their rule from here.
  template <class Need>
  [[gnu::always_inline]] inline bool compute_deps(const Action& a, std::uint32_t rank, Need&& need) {
    if (!a.has_stage() || !a.has_microbatch()) return true;
    const std::uint32_t s = a.stage, m = a.microbatch();
    switch (a.kind) {
      case ActionKind::F: {
        if (s == 0) return true;
        const std::uint32_t from = placement_[s - 1];
        if (from == rank || !explicit_comms_)
          return need(kF, s - 1, m, from, ReleaseCause::Other, transfer(s - 1, true, from, rank));
        return need(kRecvF, s, m, rank, ReleaseCause::Comm, 0.0);
      }
      case ActionKind::I:
      case ActionKind::B: {
        if (!need(kF, s, m, rank, ReleaseCause::Other, 0.0)) return false;
        if (s + 1 >= stages_) return true;
        const std::uint32_t from = placement_[s + 1];
        if (from == rank || !explicit_comms_)
          return need(kBwd, s + 1, m, from, ReleaseCause::Other, transfer(s + 1, false, from, rank));
        return need(kRecvB, s, m, rank, ReleaseCause::Comm, 0.0);
      }
      case ActionKind::W:
        return need(kBwd, s, m, rank, ReleaseCause::Other, 0.0);
      default:
        return true;
    }
  }
  // The same, folded into `r` (need_done records a missing event in missing_).
  [[gnu::always_inline]] inline bool compute_deps(Ready& r, const Action& a, std::uint32_t rank) {
    return compute_deps(
        a, rank,
        [&](KeyKind kind, std::uint32_t stage, std::uint32_t m, std::uint32_t producer, ReleaseCause cls,
            double extra) { return need_done(r, kind, stage, m, producer, cls, extra); });
  }

  [[gnu::always_inline]] inline void raise(KeyKind kind, std::uint32_t stage, std::uint32_t mb, double end) {
    const std::uint64_t k = key(kind, stage, mb);
    double& c = cell(kind, stage, mb);
    if (!absent(c)) throw Fallback{};  // raised twice: a duplicated action
    c = end;
    wake(kind, k, stage);
    if (cross_ && kind <= kBwd) {  // the other half's neighbour stage may wait for it
      const std::int32_t slot = cross_->event_slot[stage];
      if (slot >= 0) publish(cross_->event(slot, kind == kBwd, mb), end);
    }
  }
  [[gnu::always_inline]] inline void publish_compute(const Action& a, double end) {
    if (!a.has_stage() || !a.has_microbatch()) return;
    if (a.kind == ActionKind::F) raise(kF, a.stage, a.microbatch(), end);
    if (a.kind == ActionKind::I || a.kind == ActionKind::B) raise(kBwd, a.stage, a.microbatch(), end);
  }

  void advance(std::uint32_t id) {
    if (plain_ && id % kQueues == 0) return advance_compute(id);
    if (!opt_.blocking_comms && id % kQueues == 1) return advance_comm(id);
    Stream& st = streams_[id];
    const std::uint32_t rank = id / kQueues, q = id % kQueues;
    while (st.cursor != kNone) {
      const Action& a = st.program[st.cursor];
      if (st.head != kDone && !step(st, a, rank)) return;
      if (st.head != kDone) return;  // posted, waiting for its partner
      fold(rank, q, a, st.head_start, st.head_end, st.head_by, st.last_cls == ReleaseCause::None);
      st.free_at = st.head_end;
      st.last_cls = is_send_recv(a.kind) ? ReleaseCause::Comm : ReleaseCause::Other;
      st.last_by_end = is_send_recv(a.kind) ? st.head_transfer : st.head_end;
      st.head = kNew;
      st.cursor = next_on_queue(st, q, st.cursor + 1);
    }
  }

  // The compute queue when the schedule has no container and comms do not block (`plain_`, the
  // common case): advance() and step() specialised. The cursor and the previous action's end
  // live in locals, because every store to a ring cell (a double) would otherwise force the
  // stream's doubles to be reloaded. The dependency rule is compute_deps(), as for step().
  void advance_compute(std::uint32_t id) {
    Stream& st = streams_[id];
    const std::uint32_t rank = id / kQueues;
    const Action* const program = st.program;
    std::uint32_t cursor = st.cursor;
    double free_at = st.free_at;
    ReleaseCause last_cls = st.last_cls;
    while (cursor != kNone) {
      const Action a = program[cursor];
      Ready r;  // what the previous action leaves, built from locals (see By)
      r.time = free_at;
      r.by = By(free_at, rank, last_cls);
      if (!compute_deps(r, a, rank)) {
        st.cursor = cursor;
        st.free_at = free_at;
        st.last_cls = last_cls;
        block(st, id, missing_);
        return;
      }
      const double end = r.time + plain_action_duration(opt_.costs, a);  // plain_: no container here
      publish_compute(a, end);
      fold(rank, 0, program[cursor], r.time, end, r.by, last_cls == ReleaseCause::None);
      free_at = end;
      last_cls = ReleaseCause::Other;  // with non-blocking comms this queue holds no SEND or RECV
      cursor = next_on_queue(st, 0, cursor + 1);
    }
    st.cursor = kNone;
    st.free_at = free_at;
    st.last_cls = last_cls;
  }

  // The comm queue with non-blocking comms: advance() and step_comm() specialised. A SEND waits
  // for the compute that produced its data; a SEND or RECV is then posted and paired. Who
  // released a comm does not matter to the aggregates (only compute gaps are classified).
  void advance_comm(std::uint32_t id) {
    Stream& st = streams_[id];
    const std::uint32_t rank = id / kQueues;
    const Action* const program = st.program;
    while (st.cursor != kNone) {
      const Action& a = program[st.cursor];
      if (st.head == kNew) {
        double t = st.free_at;
        if (!a.has_microbatch()) {  // malformed: a comm with nothing to move finishes at once
          st.head = kDone;
          st.head_start = st.head_end = st.head_transfer = t;
        } else {
          if (a.kind == ActionKind::SendF || a.kind == ActionKind::SendB) {
            const KeyKind produced = a.kind == ActionKind::SendF ? kF : kBwd;
            const double e = cell(produced, a.stage, a.index);
            if (absent(e)) {
              wait(st, key(produced, a.stage, a.index));
              return;
            }
            t = std::max(t, e);  // Ready::take's time: the later of the two
          }
          st.head = kPosted;
          st.head_start = t;
        }
      }
      if (st.head != kDone && !pair(st, a, rank)) return;
      fold(rank, 1, a, st.head_start, st.head_end, By(), st.last_cls == ReleaseCause::None);
      st.free_at = st.head_end;
      st.last_cls = ReleaseCause::Comm;
      st.last_by_end = st.head_transfer;
      st.head = kNew;
      st.cursor = next_on_queue(st, 1, st.cursor + 1);
    }
  }

  [[gnu::always_inline]] inline bool step(Stream& st, const Action& a, std::uint32_t rank) {
    Ready r;  // what the stream's previous action leaves: built from scalars, not copied (see By)
    r.time = st.free_at;
    r.by = By(st.last_by_end, rank, st.last_cls);
    if (is_send_recv(a.kind)) return step_comm(st, a, r, rank);
    if (a.is_container()) {
      for (const Action& sub : s_.subs(a))
        if (!compute_deps(r, sub, rank)) return wait(st, missing_);
    } else if (!compute_deps(r, a, rank)) {
      return wait(st, missing_);
    }
    const double end = r.time + action_duration(opt_.costs, s_, a);
    st.head = kDone;
    st.head_start = r.time;
    st.head_end = end;
    st.head_by = r.by;
    if (a.is_container()) {
      for (const Action& sub : s_.subs(a)) publish_compute(sub, end);
    } else {
      publish_compute(a, end);
    }
    return true;
  }

  // A SEND or RECV: post it, then pair it with its partner, which is found at the head of the
  // comm queue of the partner stage's rank (both ends stop there until the pair is done).
  [[gnu::always_inline]] inline bool step_comm(Stream& st, const Action& a, Ready& r, std::uint32_t rank) {
    if (!a.has_microbatch()) {  // malformed: a comm with nothing to move finishes at once
      st.head = kDone;
      st.head_start = st.head_end = st.head_transfer = r.time;
      st.head_by = r.by;
      return true;
    }
    const std::int64_t s = a.stage;
    const std::uint32_t m = a.microbatch();
    const bool forward = a.kind == ActionKind::SendF || a.kind == ActionKind::RecvF;
    const bool is_send = a.kind == ActionKind::SendF || a.kind == ActionKind::SendB;
    if (is_send && st.head == kNew) {
      if (!need_done(r, forward ? kF : kBwd, static_cast<std::uint32_t>(s), m, rank, ReleaseCause::Other))
        return wait(st, missing_);
    }
    if (st.head == kNew) {
      st.head = kPosted;
      st.head_start = r.time;
      st.head_by = r.by;
    }
    return pair(st, a, rank);
  }

  // The posted head of `st` (a SEND or RECV of `rank`) meets its partner, which waits at the head
  // of the comm queue of the partner stage's rank: both are done when the transfer is. False
  // when the partner is not posted yet (the stream then waits for it).
  [[gnu::always_inline]] inline bool pair(Stream& st, const Action& a, std::uint32_t rank) {
    const std::int64_t s = a.stage;
    const std::uint32_t m = a.microbatch();
    const bool forward = a.kind == ActionKind::SendF || a.kind == ActionKind::RecvF;
    const bool is_send = a.kind == ActionKind::SendF || a.kind == ActionKind::SendB;
    const std::int64_t partner_stage = is_send ? (forward ? s + 1 : s - 1) : (forward ? s - 1 : s + 1);
    if (partner_stage < 0 || partner_stage >= stages_) {  // no partner can exist: nothing to move
      st.head = kDone;
      st.head_end = st.head_transfer = st.head_start;
      return true;
    }
    const ActionKind partner_kind =
        forward ? (is_send ? ActionKind::RecvF : ActionKind::SendF) : (is_send ? ActionKind::RecvB : ActionKind::SendB);
    const std::uint32_t other_rank = placement_[std::size_t(partner_stage)];
    if (cross_ && (other_rank >= cross_->mid) != (half_ != 0))
      return cross_pair(st, rank, static_cast<std::uint32_t>(s),
                        static_cast<std::uint32_t>(is_send ? s : partner_stage), m, forward, is_send, other_rank);
    const std::uint32_t other_id = other_rank * kQueues + (opt_.blocking_comms ? 0 : 1);
    Stream& other = streams_[other_id];
    const bool paired = other.cursor != kNone && other.head == kPosted &&
                        other.program[other.cursor] == Action::make(partner_kind, std::uint16_t(partner_stage), m);
    if (eager_) [[unlikely]] {
      if (is_send && send_completes_eagerly(opt_.send, opt_.comm, static_cast<std::uint32_t>(s), forward))
        return send_eagerly(st, static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(partner_stage), m, forward,
                            rank, other_rank, paired ? &other : nullptr, other_id);
      if (!is_send && !paired) {  // its SEND may be eager, and gone
        const double arrival = sent_cell(static_cast<std::uint32_t>(partner_stage), m, forward);
        if (absent(arrival)) return wait(st, kPartner);
        st.head = kDone;
        st.head_end = std::max(st.head_start, arrival);
        st.head_transfer = std::max(st.head_start, sent_cell(static_cast<std::uint32_t>(partner_stage), m, forward, 1));
        transfer_cell(forward ? kRecvF : kRecvB, static_cast<std::uint32_t>(s), m) = st.head_transfer;
        raise(forward ? kRecvF : kRecvB, static_cast<std::uint32_t>(s), m, st.head_end);
        return true;
      }
    }
    if (!paired) return wait(st, kPartner);
    // Both posted: the transfer runs from the later post; both end when it ends.
    const double begin = std::max(st.head_start, other.head_start);
    const double end = is_send ? begin + transfer(static_cast<std::uint32_t>(s), forward, rank, other_rank)
                               : begin + transfer(static_cast<std::uint32_t>(partner_stage), forward, other_rank, rank);
    st.head = other.head = kDone;
    st.head_end = other.head_end = end;
    st.head_transfer = other.head_transfer = begin;
    transfer_cell(forward ? kRecvF : kRecvB, static_cast<std::uint32_t>(is_send ? partner_stage : s), m) = begin;
    if (other.waiting_on == kPartner) {
      other.waiting_on = kNoKey;
      work_[work_size_++] = other_id;
    }
    if (is_send)
      raise(forward ? kRecvF : kRecvB, static_cast<std::uint32_t>(partner_stage), m, end);
    else
      raise(forward ? kRecvF : kRecvB, static_cast<std::uint32_t>(s), m, end);
    return true;
  }

  // The posted head of `st` is an eager SEND (timed.cpp's send_eagerly and deliver): done now,
  // its transfer ending after the transfer time; its RECV, when posted at the head of `other`
  // already, ends at the later of its post and the data's arrival, else finds the arrival in
  // sent_ when it is posted.
  bool send_eagerly(Stream& st, std::uint32_t stage, std::uint32_t partner_stage, std::uint32_t m, bool forward,
                    std::uint32_t rank, std::uint32_t other_rank, Stream* other, std::uint32_t other_id) {
    const double arrival = st.head_start + transfer(stage, forward, rank, other_rank);
    st.head = kDone;
    st.head_end = arrival;
    st.head_transfer = st.head_start;
    if (!other) {
      double& c = sent_cell(stage, m, forward);
      if (!absent(c)) throw Fallback{};  // sent twice: a duplicated action
      c = arrival;
      sent_cell(stage, m, forward, 1) = st.head_start;
      return true;
    }
    other->head = kDone;
    other->head_end = std::max(other->head_start, arrival);
    other->head_transfer = std::max(other->head_start, st.head_start);
    transfer_cell(forward ? kRecvF : kRecvB, partner_stage, m) = other->head_transfer;
    if (other->waiting_on == kPartner) {
      other->waiting_on = kNoKey;
      work_[work_size_++] = other_id;
    }
    raise(forward ? kRecvF : kRecvB, partner_stage, m, other->head_end);
    return true;
  }

  // A finished action, folded into analyze()'s and compute_memory()'s accounts in program order.
  [[gnu::always_inline]] inline void fold(std::uint32_t rank, std::uint32_t q, const Action& a, double start,
                                          double end, const By& by, bool first_fold) {
    release(a);
    RankFold& f = folds_[rank];
    if (first_fold) {  // each stream's first action; the rank's first is the earlier of two
      const auto step = static_cast<std::uint32_t>(&a - s_.ranks[rank].actions.data());
      if (step < f.first_step) {
        f.first_step = step;
        f.usage.first_action_start = start;
      }
    }
    f.usage.last_action_end = std::max(f.usage.last_action_end, end);
    if (q != 0) return;
    const double dur = busy_time(a.kind, start, end);
    if (dur > 0) {
      RankUsage& u = f.usage;
      if (!f.any) {
        u.first_start = start;
        u.warmup = start;
        f.any = true;
      } else if (start > f.prev_end) {
        split_idle_gap(u, start - f.prev_end, start, by.cls(), by.rank() != rank, by.end);
      }
      u.busy += dur;
      f.prev_end = std::max(f.prev_end, end);
      u.last_end = f.prev_end;
    }
    if (in_order_memory_) {  // see run(): q is 0 and `a` is no container
      if (!a.has_stage()) return;
      const MemoryDelta d = memory_delta(a.kind, act_[a.stage], wgt_[a.stage]);
      if (d.when != MemoryDelta::Never) apply(f, {d.when == MemoryDelta::AtStart ? start : end, d.amount});
      return;
    }
    // Memory: events before this action's start are final (later ones are all at or after it).
    if (!f.pending.empty()) flush(f, start);
    auto add = [&](const Action& x) {
      if (!x.has_stage()) return;
      const MemoryDelta d = memory_delta(x.kind, act_[x.stage], wgt_[x.stage]);
      if (d.when != MemoryDelta::Never) f.pending.push_back({d.when == MemoryDelta::AtStart ? start : end, d.amount});
    };
    if (a.is_container()) {
      for (const Action& sub : s_.subs(a)) add(sub);
    } else {
      add(a);
    }
  }

  // Applies the pending events with time < `before` (all when `before` is infinite), in
  // compute_memory's order: by time, frees before allocations, else program order.
  static void flush(RankFold& f, double before) {
    auto& p = f.pending;
    // Insertion sort, stable: the list holds a few events, and std::stable_sort may allocate.
    for (std::size_t i = 1; i < p.size(); ++i) {
      const MemEvent x = p[i];
      std::size_t j = i;
      for (; j > 0 && (x.time < p[j - 1].time || (x.time == p[j - 1].time && x.delta < p[j - 1].delta)); --j)
        p[j] = p[j - 1];
      p[j] = x;
    }
    std::size_t n = 0;
    for (; n < p.size() && p[n].time < before; ++n) apply(f, p[n]);
    p.erase(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(n));
  }
  static void apply(RankFold& f, const MemEvent& e) {
    f.level += e.delta;
    if (f.level > f.peak + 1e-12) {
      f.peak = f.level;
      f.peak_time = e.time;
    }
  }

  // The action no longer needs its microbatch's events.
  [[gnu::always_inline]] inline void release(const Action& a) {
    auto one = [&](const Action& x) {
      if (x.has_microbatch() && --remaining_[x.microbatch()] == 0 && x.microbatch() == lo_) advance_lo();
    };
    if (a.is_container()) {
      for (const Action& sub : s_.subs(a)) one(sub);
    } else {
      one(a);
    }
  }
  void advance_lo() {
    while (lo_ < microbatches_ && remaining_[lo_] == 0) {
      // Microbatch lo_ is dead: empty its row for the microbatch that will reuse it.
      std::fill_n(ring_.begin() + std::ptrdiff_t(std::size_t{lo_ & (window_ - 1)} * row_), row_, kAbsent);
      if (eager_)
        std::fill_n(sent_.begin() + std::ptrdiff_t(std::size_t{lo_ & (window_ - 1)} * sent_row()), sent_row(), kAbsent);
      ++lo_;
    }
  }

  SimAnalysis finish_analysis() {
    SimAnalysis a;
    // The latest end of any action: each rank's latest, folded as its actions finished.
    double makespan = 0;
    for (const RankFold& f : folds_) makespan = std::max(makespan, f.usage.last_action_end);
    a.makespan = makespan;
    const std::size_t R = folds_.size();
    a.ranks.resize(R);
    a.memory.in_bytes = memory_.in_bytes;
    a.memory.per_rank.resize(R);
    a.memory.peak.resize(R);
    a.memory.peak_time.resize(R);
    BubbleFold bubbles;
    for (std::size_t r = 0; r < R; ++r) {
      RankFold& f = folds_[r];
      RankUsage& u = f.usage;
      bubbles.add_rank(u, f.any, makespan);
      a.ranks[r] = u;
      flush(f, INFINITY);
      a.memory.peak[r] = f.peak;
      a.memory.peak_time[r] = f.peak_time;
    }
    bubbles.set_ratios(a, R, makespan);
    return a;
  }

  const Schedule& s_;
  const std::vector<std::uint32_t>& placement_;
  const TimedOptions& opt_;
  const MemoryModel& memory_;
  const LeafCensus* census_;  ///< what a pass before this one found, for scan(); may be null
  bool read_census_ = false;  ///< scan() took census_
  std::uint32_t stages_ = 0, microbatches_ = 0;
  bool explicit_comms_ = false;
  bool plain_ = true;             ///< no container and non-blocking comms: advance_compute() serves queue 0
  bool in_order_memory_ = false;  ///< plain_ and every compute cost positive: memory events applied at once
  std::vector<std::uint32_t> remaining_;
  std::uint32_t lo_ = 0, window_ = 16;
  std::size_t row_ = 0;           ///< cells per microbatch: stages x kinds
  std::vector<double> ring_;      ///< event end times, window_ rows; NaN: not yet
  bool eager_ = false;            ///< the send mode is eager: sent_ is in use
  std::vector<double> sent_;      ///< eager sends' arrivals and posts, window_ rows of stages x 4 (sent_cell)
  std::vector<double> transfer_;  ///< RECV events' transfer begins, window_ rows of stages x 2
  std::vector<Stream> streams_;
  std::vector<std::uint32_t> work_;  ///< streams to advance, a stack
  std::size_t work_size_ = 0;
  std::uint64_t missing_ = kNoKey;
  std::vector<double> act_, wgt_;
  std::uint8_t queue_of_[kActionKindCount] = {};
  std::vector<RankFold> folds_;
  // Two threads (run_two_halves): the table shared with the other half, this half's ranks, and
  // the streams that wait for the other half, with the cell each polls.
  struct Poll {
    std::uint32_t id;
    const std::atomic<double>* cell;
  };
  CrossHalves* cross_ = nullptr;
  std::uint32_t half_ = 0, own_begin_ = 0, own_end_ = 0;
  std::vector<std::uint8_t> foreign_stage_;  ///< by stage: placed on the other half (its events come from cross_)
  std::vector<Poll> polls_;
  const std::atomic<double>* poll_cell_ = nullptr;
  std::uint64_t written_ = 0;                 ///< cells written for the other half
  std::size_t scan_mid_ = 0;                  ///< where the scan's second half began (rank_count(): one half)
  std::vector<std::uint32_t> second_counts_;  ///< the scan's counts of that half, by microbatch
};

}  // namespace

namespace {

// The Timeline path, for the cases the ring does not handle.
SimAnalysis timeline_path(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank, const TimedOptions& opt,
                          const MemoryModel& memory) {
  SimAnalysis a = analyze(s, simulate_timed(s, stage_to_rank, opt), memory);
  for (auto& points : a.memory.per_rank) points.clear();
  return a;
}

}  // namespace

namespace {

// The ring run, split at rank `split_at` (AggregateRun::run); nullopt when it cannot give the
// answer, with `st` saying why (stuck, or a case it does not handle). When two threads cannot
// decide, one thread does.
std::optional<SimAnalysis> ring_run(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                    const TimedOptions& opt, const MemoryModel& memory, AggregateStats& st,
                                    const LeafCensus* census, std::size_t split_at = AggregateRun::kSplitAsHalves) {
  st = AggregateStats{};
  try {
    AggregateRun run(s, stage_to_rank, opt, memory, census);
    if (std::optional<SimAnalysis> a = run.run(split_at)) {
      st.window = run.window();
      st.two_threads = run.two_threads();
      st.census = run.read_census();
      return a;
    }
    AggregateRun alone(s, stage_to_rank, opt, memory, census);
    std::optional<SimAnalysis> a = alone.run(0);
    st.window = alone.window();
    st.census = alone.read_census();
    return a;
  } catch (const Stuck&) {
    st.stuck = true;
  } catch (const Fallback&) {
  }
  return std::nullopt;
}

}  // namespace

SimAnalysis simulate_aggregates(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                const TimedOptions& opt, const MemoryModel& memory, AggregateStats* stats,
                                const LeafCensus* census) {
  AggregateStats ignored;
  AggregateStats& st = stats ? *stats : ignored;
  if (auto a = ring_run(s, stage_to_rank, opt, memory, st, census)) return *std::move(a);
  st.fell_back = true;  // when stuck, simulate_timed throws TimedDeadlock naming the stuck actions
  return timeline_path(s, stage_to_rank, opt, memory);
}

SimAnalysis simulate_aggregates_split(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                      const TimedOptions& opt, const MemoryModel& memory, std::size_t mid,
                                      AggregateStats* stats, const LeafCensus* census) {
  AggregateStats ignored;
  AggregateStats& st = stats ? *stats : ignored;
  if (auto a = ring_run(s, stage_to_rank, opt, memory, st, census, mid)) return *std::move(a);
  st.fell_back = true;
  return timeline_path(s, stage_to_rank, opt, memory);
}

std::optional<SimAnalysis> try_simulate_aggregates(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                                   const TimedOptions& opt, const MemoryModel& memory,
                                                   AggregateStats* stats) {
  AggregateStats ignored;
  AggregateStats& st = stats ? *stats : ignored;
  if (auto a = ring_run(s, stage_to_rank, opt, memory, st, nullptr)) return a;
  if (st.stuck) return std::nullopt;
  st.fell_back = true;
  try {
    return timeline_path(s, stage_to_rank, opt, memory);
  } catch (const TimedDeadlock&) {
    return std::nullopt;
  }
}

}  // namespace ppsched
