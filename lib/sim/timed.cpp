// The timed simulator (timed.hpp). Event keys are (kind, stage, microbatch) slots that hold the
// timeline entry which produced the event; a stream whose head lacks an event waits on exactly
// one key, in an intrusive list, and is woken when that key is written.
#include "sim/timed.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <queue>
#include <unordered_map>

#include "ir/action_text.hpp"
#include "passes/key_table.hpp"
#include "sim/timed_rules.hpp"

namespace ppsched {

TimedDeadlock::TimedDeadlock(std::vector<Stuck> stuck, Timeline partial)
    : std::runtime_error("the schedule cannot finish: every remaining action waits for another"),
      stuck_(std::move(stuck)),
      partial_(std::move(partial)) {}

namespace {

constexpr std::uint32_t kNone = Timeline::kNone;
// Event keys are KeyTable's (passes/key_table.hpp): (stage x microbatches + microbatch) x kinds
// + kind, up to 2^16 x 2^32 x 6.
using Key = std::uint64_t;
constexpr Key kNoKey = ~Key{0};
constexpr double kNotDone = -1.0;

enum KeyKind : std::uint32_t { kF, kBwd, kSendF, kRecvF, kSendB, kRecvB, kKeyKinds };

// Each rank has in-order queues (streams): compute first, then its communicator queues, one
// under per-rank (sim/p2p_queues.hpp). Sends and receives are shown on their own tracks, but like
// NCCL's P2P on one communicator the comms of one queue run in program order: a receive posted
// early blocks the sends behind it.

Stream stream_of(const Action& a, bool blocking) {
  if (blocking) return Stream::Compute;
  if (a.kind == ActionKind::SendF || a.kind == ActionKind::SendB) return Stream::Send;
  if (a.kind == ActionKind::RecvF || a.kind == ActionKind::RecvB) return Stream::Recv;
  return Stream::Compute;
}

class Simulator {
  struct Slot;  // an event's producer and its waiters (defined with the members below)

 public:
  // times = false: decide only whether the schedule finishes (and where it sticks). Whether an
  // action can run never depends on a time, so the control flow is the same; only the timeline
  // arrays (start, end, released_by, peer) are neither allocated nor written.
  Simulator(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank, const TimedOptions& opt,
            bool times = true)
      : s_(s), placement_(stage_to_rank), opt_(opt), times_(times) {
    stages_ = stages_in_use(s);
    microbatches_ = microbatches_in_use(s);
    explicit_comms_ = has_comms(s);
    // Sharing changes when actions run, never whether they can: find_stuck (no times) ignores it.
    if (times_ && shares_devices(opt.device_of_rank)) {
      device_of_rank_ = opt.device_of_rank;
      device_of_rank_.resize(s.rank_count(), kNone);  // ranks it leaves out: a device of their own
      std::uint32_t devices = 0;
      for (std::uint32_t d : device_of_rank_)
        if (d != kNone) devices = std::max(devices, d + 1);
      std::vector<std::uint32_t> ranks_on(devices, 0);
      for (std::uint32_t d : device_of_rank_)
        if (d != kNone) ++ranks_on[d];
      for (std::uint32_t& d : device_of_rank_)
        if (d != kNone && ranks_on[d] < 2) d = kNone;
      queues_.resize(devices);
      t_.device_turn.assign(n_entries(s), 0);
      device_free_.assign(devices, 0.0);
      device_last_.assign(devices, kNone);
    }
  }

  Timeline run() {
    build_entries();
    slots_ = Slots(stages_, microbatches_, t_.step.size());
    const std::size_t streams = stream_rank_.size();
    wait_next_.assign(streams, kNone);
    waiting_on_.assign(streams, kNoKey);
    free_at_.assign(streams, 0.0);
    last_.assign(streams, kNone);
    for (std::uint32_t id = 0; id < streams; ++id) work_.push_back(id);
    for (;;) {
      while (!work_.empty()) {
        std::uint32_t id = work_.back();
        work_.pop_back();
        advance(id);
      }
      if (!dispatch_one()) break;
    }
    for (std::size_t id = 0; id < streams; ++id)
      if (cursor_[id] != kNone) throw_deadlock();
    if (times_)
      for (std::size_t e = 0; e < t_.size(); ++e) t_.makespan = std::max(t_.makespan, t_.end[e]);
    return std::move(t_);
  }

  /// Runs without times; the stuck heads, or nothing when the schedule finishes.
  std::vector<TimedDeadlock::Stuck> run_verdict() {
    try {
      run();
    } catch (const TimedDeadlock& d) {
      return d.stuck();
    }
    return {};
  }

 private:
  void build_entries() {
    const std::size_t n = n_entries(s_);
    state_.assign(n, kNew);
    if (times_) {
      t_.start.assign(n, kNotDone);
      t_.end.assign(n, kNotDone);
      t_.released_by.assign(n, kNone);
      t_.peer.assign(n, kNone);
      t_.transfer_begin.assign(n, -1.0);
    }
    t_.stream.resize(n);
    t_.step.resize(n);
    t_.rank_begin.assign(1, 0);
    // Per-rank finds a stream's next entry by scanning its rank's stream bytes (cheaper than
    // writing a link per entry: the verdict-only run is mostly this loop); split queues link them.
    linked_ = opt_.p2p_queues != P2pQueues::PerRank;
    next_.assign(linked_ ? n : 0, kNone);
    stream_rank_.clear();
    cursor_.clear();
    std::uint32_t e = 0;
    std::vector<std::uint32_t> tail;  // the last entry so far of each stream of this rank
    for (std::uint32_t rank = 0; rank < s_.rank_count(); ++rank) {
      const auto& r = s_.ranks[rank];
      const auto base = static_cast<std::uint32_t>(stream_rank_.size());
      // Queue 0 is compute; per-rank always has its one comm queue, so that its stream ids are
      // rank x 2 + queue and the wake order is that of the two-queue model.
      queue_keys_.clear();
      const std::uint32_t fixed = opt_.p2p_queues == P2pQueues::PerRank ? 2 : 1;
      stream_rank_.insert(stream_rank_.end(), fixed, rank);
      cursor_.insert(cursor_.end(), fixed, kNone);
      tail.assign(fixed, kNone);
      for (std::size_t i = 0; i < r.actions.size(); ++i) {
        const Action& a = r.actions[i];
        if (a.is_idle()) continue;
        t_.stream[e] = stream_of(a, opt_.blocking_comms);
        t_.step[e] = static_cast<std::uint32_t>(i);
        const std::uint32_t q = t_.stream[e] == Stream::Compute ? 0 : comm_queue(a, rank, tail);
        if (tail[q] == kNone)
          cursor_[base + q] = e;
        else if (linked_)
          next_[tail[q]] = e;
        tail[q] = e;
        ++e;
      }
      t_.rank_begin.push_back(e);
    }
  }

  // The entry after `e` on stream `id`, or kNone.
  std::uint32_t following(std::uint32_t id, std::uint32_t e) const {
    if (linked_) return next_[e];
    const std::uint32_t rank = id / 2;  // per-rank: stream rank x 2 + (0 compute, 1 comm)
    const bool comm = id % 2 == 1;
    for (std::uint32_t f = e + 1; f < t_.rank_begin[rank + 1]; ++f)
      if ((t_.stream[f] != Stream::Compute) == comm) return f;
    return kNone;
  }

  // The rank-local index of the comm queue of `a` (a SEND or RECV on `rank`, not blocking), a
  // new stream when it is the first of its queue.
  std::uint32_t comm_queue(const Action& a, std::uint32_t rank, std::vector<std::uint32_t>& tail) {
    if (opt_.p2p_queues == P2pQueues::PerRank) return 1;
    const CommQueueKey k = comm_queue_key(opt_.p2p_queues, a.kind, a.stage, rank, placement_);
    const std::uint64_t packed = (std::uint64_t{k.from} << 34) ^ (std::uint64_t{k.to} << 2) ^ k.channel;
    auto [it, added] = queue_keys_.try_emplace(packed, static_cast<std::uint32_t>(tail.size()));
    if (added) {
      stream_rank_.push_back(rank);
      cursor_.push_back(kNone);
      tail.push_back(kNone);
    }
    return it->second;
  }

  static std::size_t n_entries(const Schedule& s) {
    std::size_t n = 0;
    for (const auto& r : s.ranks)
      for (const Action& a : r.actions) n += !a.is_idle();
    return n;
  }

  const Action& action(std::uint32_t e, std::uint32_t rank) const { return s_.ranks[rank].actions[t_.step[e]]; }

  // Slot of an event, or kNoKey when the action has no such event (a stage or microbatch out of
  // range, e.g. in a malformed schedule read leniently).
  Key key(KeyKind kind, std::int64_t stage, std::uint32_t mb) const {
    if (stage < 0 || stage >= stages_ || mb >= microbatches_) return kNoKey;
    return slots_.key(kind, static_cast<std::uint64_t>(stage), mb);
  }
  // An entry's progress lives in one byte per entry (not in the timeline's times), so that the
  // control flow is the same with and without times and a check touches 1 byte, not 8.
  bool done(std::uint32_t e) const { return e != kNone && state_[e] >= kDone; }
  bool posted(std::uint32_t e) const { return e != kNone && state_[e] != kNew; }
  double end_of(std::uint32_t e) const { return times_ ? t_.end[e] : 0.0; }

  Slot& slot_at(Key k) { return slots_[k]; }
  std::uint32_t entry_at(Key k) const { return slots_.get(k).entry; }

  void publish(Key k, std::uint32_t e) {
    if (k == kNoKey) return;
    Slot& slot = slot_at(k);
    slot.entry = e;
    for (std::uint32_t id = slot.waiters; id != kNone;) {
      std::uint32_t next = wait_next_[id];
      wait_next_[id] = kNone;
      waiting_on_[id] = kNoKey;
      work_.push_back(id);
      id = next;
    }
    slot.waiters = kNone;
  }

  void wait(std::uint32_t id, Key k) {
    Slot& slot = slot_at(k);
    waiting_on_[id] = k;
    wait_next_[id] = slot.waiters;
    slot.waiters = id;
  }

  // The time a dependency is met, folded into (ready, by); false when it is not met yet, with
  // the key to wait on in `missing`.
  struct Ready {
    double time = 0;
    std::uint32_t by = kNone;
    Key missing = kNoKey;
    // Keeps the latest time; on a tie the first contributor (the stream predecessor) stays.
    void take(double t, std::uint32_t e) {
      if (by == kNone ? t >= time : t > time) {
        time = t;
        by = e;
      }
    }
  };

  // Needs the entry published under `k` to be done; `extra` is added to its end (transfer).
  bool need_done(Ready& r, Key k, double extra = 0) {
    if (k == kNoKey) return true;  // no such event can exist: nothing to wait for
    std::uint32_t e = entry_at(k);
    if (!done(e)) {
      r.missing = k;
      return false;
    }
    r.take(end_of(e) + extra, e);
    return true;
  }

  double transfer(std::uint32_t stage, bool forward, std::uint32_t from, std::uint32_t to) const {
    return from == to ? 0.0 : opt_.comm.transfer_time(stage, forward, from, to);
  }

  // What a compute (sub-)action on `rank` needs, folded into r.
  bool compute_deps(Ready& r, const Action& a, std::uint32_t rank) {
    if (!a.has_stage() || !a.has_microbatch()) return true;
    const std::uint32_t s = a.stage, m = a.microbatch();
    auto rank_of = [&](std::uint32_t stage) { return stage < placement_.size() ? placement_[stage] : rank; };
    switch (a.kind) {
      case ActionKind::F: {
        if (s == 0) return true;
        if (rank_of(s - 1) == rank || !explicit_comms_)
          return need_done(r, key(kF, s - 1, m), transfer(s - 1, true, rank_of(s - 1), rank));
        return need_done(r, key(kRecvF, s, m));
      }
      case ActionKind::I:
      case ActionKind::B: {
        if (!need_done(r, key(kF, s, m))) return false;
        if (s + 1 >= stages_) return true;
        if (rank_of(s + 1) == rank || !explicit_comms_)
          return need_done(r, key(kBwd, s + 1, m), transfer(s + 1, false, rank_of(s + 1), rank));
        return need_done(r, key(kRecvB, s, m));
      }
      case ActionKind::W:
        return need_done(r, key(kBwd, s, m));
      default:
        return true;
    }
  }

  void publish_compute(const Action& a, std::uint32_t e) {
    if (!a.has_stage() || !a.has_microbatch()) return;
    if (a.kind == ActionKind::F) publish(key(kF, a.stage, a.microbatch()), e);
    if (a.kind == ActionKind::I || a.kind == ActionKind::B) publish(key(kBwd, a.stage, a.microbatch()), e);
  }

  void finish(std::uint32_t e, double start, double end, std::uint32_t by) {
    state_[e] = kDone;
    if (!times_) return;
    t_.start[e] = start;
    t_.end[e] = end;
    t_.released_by[e] = by;
  }

  // Completes a SEND/RECV pair once both have been reached on their streams.
  void complete_pair(std::uint32_t send, std::uint32_t recv, std::uint32_t from, std::uint32_t to, std::uint32_t stage,
                     bool forward) {
    state_[send] = state_[recv] = kDone;
    if (times_) {
      double begin = std::max(t_.start[send], t_.start[recv]);
      double end = begin + transfer(stage, forward, from, to);
      t_.end[send] = t_.end[recv] = end;
      t_.transfer_begin[send] = t_.transfer_begin[recv] = begin;
      t_.peer[send] = recv;
      t_.peer[recv] = send;
      // The later of the two posts set the transfer's start: it released the other side.
      if (t_.start[recv] > t_.start[send])
        t_.released_by[send] = recv;
      else
        t_.released_by[recv] = send;
    }
    const Action& ra = action(recv, to);
    publish(key(forward ? kRecvF : kRecvB, ra.stage, ra.microbatch()), recv);
    const Action& sa = action(send, from);
    publish(key(forward ? kSendF : kSendB, sa.stage, sa.microbatch()), send);
  }

  // An eager SEND, just posted: done without its RECV; its transfer to the rank of the partner
  // stage starts now, and it ends when the transfer does (the data sits in the peer's buffer).
  void send_eagerly(std::uint32_t send, std::uint32_t rank, std::uint32_t stage, std::uint32_t partner_stage,
                    bool forward) {
    state_[send] = kSentEager;
    if (!times_) return;
    const std::uint32_t to = partner_stage < placement_.size() ? placement_[partner_stage] : rank;
    t_.end[send] = t_.start[send] + transfer(stage, forward, rank, to);
    t_.transfer_begin[send] = t_.start[send];
  }

  // A posted RECV meets the eager SEND that has sent its data: it ends at the later of its own
  // post and the data's arrival (the SEND's end), released by the SEND when the data set it.
  void deliver(std::uint32_t send, std::uint32_t recv, std::uint32_t to, bool forward) {
    state_[send] = state_[recv] = kDone;
    if (times_) {
      const double arrival = t_.end[send];
      t_.end[recv] = std::max(t_.start[recv], arrival);
      t_.transfer_begin[recv] = std::max(t_.start[recv], t_.start[send]);
      t_.peer[send] = recv;
      t_.peer[recv] = send;
      if (arrival >= t_.start[recv]) t_.released_by[recv] = send;
    }
    const Action& ra = action(recv, to);
    publish(key(forward ? kRecvF : kRecvB, ra.stage, ra.microbatch()), recv);
  }

  // Runs stream `id` forward as far as its dependencies allow.
  void advance(std::uint32_t id) {
    const std::uint32_t rank = stream_rank_[id];
    while (cursor_[id] != kNone) {
      const std::uint32_t e = cursor_[id];
      const Action& a = action(e, rank);
      if (state_[e] == kQueued) return;  // dispatch_one wakes it
      if (!done(e) && !step(id, e, a, rank)) return;
      if (!done(e)) return;  // posted, waiting for its partner
      free_at_[id] = end_of(e);
      last_[id] = e;
      cursor_[id] = following(id, e);
    }
  }

  // Tries to run entry e (the head of stream id). Returns false when it must wait.
  bool step(std::uint32_t id, std::uint32_t e, const Action& a, std::uint32_t rank) {
    Ready r;
    r.take(free_at_[id], last_[id]);
    if (is_send_recv(a.kind)) return step_comm(id, e, a, r, rank);
    if (a.is_container()) {
      for (const Action& sub : s_.subs(a))
        if (!compute_deps(r, sub, rank)) return wait(id, r.missing), false;
    } else if (!compute_deps(r, a, rank)) {
      return wait(id, r.missing), false;
    }
    if (!device_of_rank_.empty() && device_of_rank_[rank] != kNone) {
      // Its inputs are there: it queues for its shared device, and dispatch_one runs it.
      state_[e] = kQueued;
      queues_[device_of_rank_[rank]].push({r.time, e, r.by, id});
      ++queued_;
      return false;
    }
    run_compute(e, a, r.time, r.by);
    return true;
  }

  void run_compute(std::uint32_t e, const Action& a, double start, std::uint32_t by) {
    finish(e, start, times_ ? start + action_duration(opt_.costs, s_, a) : 0.0, by);
    if (a.is_container()) {
      for (const Action& sub : s_.subs(a)) publish_compute(sub, e);
    } else {
      publish_compute(a, e);
    }
  }

  // Runs the queued action that starts first on any shared device: its device's earliest-ready
  // one, at the later of that and the device's end of work. Every action queued later becomes
  // ready after this start (it waits for something that ends after it), so no device ever runs
  // an action ahead of one that was ready before it. False when nothing is queued.
  bool dispatch_one() {
    if (queued_ == 0) return false;
    std::uint32_t best = kNone;
    double best_start = 0;
    for (std::uint32_t d = 0; d < queues_.size(); ++d) {
      if (queues_[d].empty()) continue;
      const double start = std::max(queues_[d].top().ready, device_free_[d]);
      if (best == kNone || start < best_start) best = d, best_start = start;
    }
    const Queued q = queues_[best].top();
    queues_[best].pop();
    --queued_;
    // Released by what it waited for: its inputs, or the action the device ran before it.
    const bool turn = device_free_[best] > q.ready;
    const std::uint32_t by = turn ? device_last_[best] : q.by;
    t_.device_turn[q.entry] = turn;
    const std::uint32_t rank = t_.rank_of(q.entry);
    run_compute(q.entry, action(q.entry, rank), best_start, by);
    device_free_[best] = t_.end[q.entry];
    device_last_[best] = q.entry;
    work_.push_back(q.stream);
    return true;
  }

  bool step_comm(std::uint32_t id, std::uint32_t e, const Action& a, Ready& r, std::uint32_t rank) {
    if (!a.has_microbatch()) {  // malformed: a comm with nothing to move finishes at once
      finish(e, r.time, r.time, r.by);
      return true;
    }
    const std::int64_t s = a.stage;
    const std::uint32_t m = a.microbatch();
    const bool forward = a.kind == ActionKind::SendF || a.kind == ActionKind::RecvF;
    const bool is_send = a.kind == ActionKind::SendF || a.kind == ActionKind::SendB;
    // The data a SEND carries must exist first.
    if (is_send && !posted(e)) {
      Key produced = forward ? key(kF, s, m) : key(kBwd, s, m);
      if (!need_done(r, produced)) return wait(id, r.missing), false;
    }
    // Reach (post) it on its stream.
    const KeyKind own = forward ? (is_send ? kSendF : kRecvF) : (is_send ? kSendB : kRecvB);
    if (!posted(e)) {
      state_[e] = kPosted;
      if (times_) {
        t_.start[e] = r.time;
        t_.released_by[e] = r.by;
      }
      publish(key(own, s, m), e);
    }
    // Find the partner: SEND_F(s) <-> RECV_F(s+1); SEND_B(s) <-> RECV_B(s-1).
    const std::int64_t partner_stage = is_send ? (forward ? s + 1 : s - 1) : (forward ? s - 1 : s + 1);
    const KeyKind partner_kind = forward ? (is_send ? kRecvF : kSendF) : (is_send ? kRecvB : kSendB);
    const Key pk = key(partner_kind, partner_stage, m);
    if (pk == kNoKey) {  // no partner can exist (stage outside the pipeline): nothing to move
      state_[e] = kDone;
      if (times_) t_.end[e] = t_.start[e];
      return true;
    }
    const std::uint32_t partner = entry_at(pk);
    // An eager SEND is done once posted; it delivers to its RECV now if that is posted, else
    // when the RECV is (below).
    if (is_send && !done(e) && send_completes_eagerly(opt_.send, opt_.comm, static_cast<std::uint32_t>(s), forward)) {
      send_eagerly(e, rank, static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(partner_stage), forward);
      if (posted(partner) && !done(partner)) deliver(e, partner, t_.rank_of(partner), forward);
      return true;
    }
    if (!posted(partner)) return wait(id, pk), false;
    if (!is_send && !done(e) && state_[partner] == kSentEager) {
      deliver(partner, e, rank, forward);
      return true;
    }
    // A partner that is done while this end is not was paired with another end: this one is a
    // duplicate, and nothing will ever match it (aggregate.cpp's model waits for good too).
    if (done(partner) && !done(e)) return wait(id, pk), false;
    partner_rank_ = t_.rank_of(partner);
    if (!done(e)) {
      if (is_send)
        complete_pair(e, partner, rank, partner_rank_, static_cast<std::uint32_t>(s), forward);
      else
        complete_pair(partner, e, partner_rank_, rank, static_cast<std::uint32_t>(partner_stage), forward);
    }
    return true;
  }

  [[noreturn]] void throw_deadlock() {
    std::vector<TimedDeadlock::Stuck> stuck;
    for (std::uint32_t id = 0; id < cursor_.size(); ++id) {
      if (cursor_[id] == kNone) continue;
      std::uint32_t rank = stream_rank_[id], e = cursor_[id];
      std::string why = "nothing (the stream never ran)";
      ActionKind waits = ActionKind::Idle;
      std::uint32_t wstage = 0, wmb = 0;
      Key k = waiting_on_[id];
      if (k != kNoKey) {
        static constexpr const char* kNames[] = {"F", "I or B", "SEND_F", "RECV_F", "SEND_B", "RECV_B"};
        static constexpr ActionKind kKinds[] = {ActionKind::F,     ActionKind::I,     ActionKind::SendF,
                                                ActionKind::RecvF, ActionKind::SendB, ActionKind::RecvB};
        const std::uint32_t kind = slots_.kind_of(k);
        wstage = slots_.stage_of(k);
        wmb = slots_.microbatch_of(k);
        waits = kKinds[kind];
        why = fmt::format("{} of stage {}, microbatch {}", kNames[kind], wstage, wmb);
      }
      stuck.push_back({rank, t_.step[e], why, waits, wstage, wmb});
    }
    std::sort(stuck.begin(), stuck.end(),
              [](const auto& a, const auto& b) { return a.rank < b.rank || (a.rank == b.rank && a.step < b.step); });
    stuck.erase(std::unique(stuck.begin(), stuck.end(),
                            [](const auto& a, const auto& b) { return a.rank == b.rank && a.step == b.step; }),
                stuck.end());
    throw TimedDeadlock(std::move(stuck), std::move(t_));
  }

  const Schedule& s_;
  const std::vector<std::uint32_t>& placement_;
  const TimedOptions& opt_;
  const bool times_;
  // kSentEager: an eager SEND that is done (its stream moves on) and has not met its RECV yet.
  // kQueued: a compute action waiting for its shared device.
  enum EntryState : std::uint8_t { kNew, kPosted, kQueued, kDone, kSentEager };
  std::vector<std::uint8_t> state_;
  std::uint32_t stages_ = 0, microbatches_ = 0;
  bool explicit_comms_ = false;
  Timeline t_;
  struct Slot {
    std::uint32_t entry = kNone;    ///< the entry that raised this event
    std::uint32_t waiters = kNone;  ///< streams waiting for it (intrusive list through wait_next_)
  };
  using Slots = KeyTable<Slot, kKeyKinds>;
  Slots slots_;  ///< by event key: dense, or sparse for a malformed schedule's far microbatch
  std::uint32_t partner_rank_ = 0;
  std::vector<std::uint32_t> wait_next_, last_, cursor_;
  // Streams: each one's rank (a rank's streams are contiguous, compute first), and with split
  // queues per entry the next entry of its stream. Split queues are numbered per rank as they
  // first appear.
  std::vector<std::uint32_t> stream_rank_, next_;
  bool linked_ = false;
  std::unordered_map<std::uint64_t, std::uint32_t> queue_keys_;
  std::vector<Key> waiting_on_;
  std::vector<double> free_at_;
  std::vector<std::uint32_t> work_;
  // Shared devices (empty when none): each rank's device (kNone: it has one to itself), and per
  // device its queue of ready compute, its end of work and the action that set it.
  struct Queued {
    double ready;
    std::uint32_t entry;  ///< entries are numbered rank by rank: the lower entry is the lower rank
    std::uint32_t by;     ///< what set `ready`
    std::uint32_t stream;
    bool operator>(const Queued& o) const { return ready > o.ready || (ready == o.ready && entry > o.entry); }
  };
  std::vector<std::uint32_t> device_of_rank_;
  std::vector<std::priority_queue<Queued, std::vector<Queued>, std::greater<Queued>>> queues_;
  std::vector<double> device_free_;
  std::vector<std::uint32_t> device_last_;
  std::size_t queued_ = 0;
};

}  // namespace

std::vector<std::uint32_t> ranks_on_devices(std::uint32_t ranks, std::uint32_t devices) {
  std::vector<std::uint32_t> out(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r)
    out[r] = static_cast<std::uint32_t>(std::uint64_t{r} * devices / std::max<std::uint32_t>(ranks, 1));
  return out;
}

bool shares_devices(const std::vector<std::uint32_t>& device_of_rank) {
  std::vector<std::uint32_t> sorted = device_of_rank;
  std::sort(sorted.begin(), sorted.end());
  return std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
}

Timeline simulate_timed(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank, const TimedOptions& opt) {
  return Simulator(s, stage_to_rank, opt).run();
}

std::vector<TimedDeadlock::Stuck> find_stuck(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                             bool blocking_comms) {
  TimedOptions opt;
  opt.blocking_comms = blocking_comms;
  return find_stuck(s, stage_to_rank, opt);
}

std::vector<TimedDeadlock::Stuck> find_stuck(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                             const TimedOptions& opt) {
  return Simulator(s, stage_to_rank, opt, false).run_verdict();
}

}  // namespace ppsched
