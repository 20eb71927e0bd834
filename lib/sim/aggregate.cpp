// simulate_aggregates (aggregate.hpp): the timed model of timed.cpp, step for step, with the
// Timeline replaced by running aggregates and the dense event table replaced by a ring.
//
// What differs from timed.cpp, and why it is still the same run:
//   - An event slot holds the event's time (and, for a posted SEND/RECV, the stream that posted
//     it) instead of the index of a timeline entry, so nothing per action is stored.
//   - Slots live in a ring of `window_` microbatches. Every dependency of the model joins two
//     actions of the same microbatch, so an event of microbatch m is dead once no unfinished
//     action names m; `remaining_[m]` counts those actions and `lo_` is the smallest m still
//     named. Any slot touched has lo_ <= m (its reader or writer is unfinished); the ring doubles
//     when m >= lo_ + window_, so a slot is reused only for a dead microbatch.
//   - Streams are woken in the same order (the same LIFO work list and waiter lists), so
//     each action starts at the same time and is released by the same dependency.
//   - A finished action is folded at once into the per-rank aggregates of analyze() and the
//     memory accounting of compute_memory(), in the order those functions visit it.
// Cases where the timeline-free bookkeeping could diverge (an event raised twice, a SEND or
// RECV paired twice: only malformed schedules do that), a stuck run, and a microbatch grid too
// sparse for a per-microbatch count fall back to analyze(simulate_timed(...)).
#include "sim/aggregate.hpp"

#include <algorithm>
#include <cmath>

namespace ppsched {

namespace {

constexpr std::uint32_t kNone = 0xFFFFFFFF;
enum KeyKind : std::uint32_t { kF, kBwd, kSendF, kRecvF, kSendB, kRecvB, kKeyKinds };
constexpr std::uint32_t kQueues = 2;  // compute, and all point-to-point comms (timed.cpp)

struct Fallback {};  // thrown inside the run: use the Timeline path instead

// Who released an action, as much of it as analyze() looks at.
enum class ByClass : std::uint8_t { None, Comm, Other };
struct By {
  double end = 0;
  std::uint32_t rank = kNone;
  ByClass cls = ByClass::None;
};

// The time a dependency is met and who met it; the rule of timed.cpp's Ready::take.
struct Ready {
  double time = 0;
  By by;
  void take(double t, const By& b) {
    if (by.cls == ByClass::None ? t >= time : t > time) {
      time = t;
      by = b;
    }
  }
};

struct MemEvent {
  double time;
  double delta;
};

enum SlotState : std::uint8_t { kAbsent, kPosted, kDone };

struct Slot {
  double time = 0;                ///< post time (kPosted) or end (kDone)
  std::uint32_t tag = kNone;      ///< the microbatch this slot currently holds
  std::uint32_t waiters = kNone;  ///< streams waiting for it, through Stream::wait_next
  std::uint32_t owner = kNone;    ///< the stream that raised it
  std::uint8_t state = kAbsent;
};

struct Stream {
  const Action* program = nullptr;
  std::uint32_t cursor = kNone, size = 0;  ///< head: program[cursor]; kNone when done
  std::uint32_t wait_next = kNone;
  std::uint8_t head = kAbsent;  ///< the head's progress: kAbsent (new), kPosted, kDone
  double head_start = 0, head_end = 0;
  By head_by;  ///< what released the head
  double free_at = 0;
  By last;  ///< the previous action on this stream, as a releaser
};

struct RankFold {
  RankUsage usage;
  bool any = false;
  double prev_end = 0;
  double level = 0, peak = 0, peak_time = 0;
  std::vector<MemEvent> pending;  ///< memory events at or after the last flushed time
};

class AggregateRun {
 public:
  AggregateRun(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank, const TimedOptions& opt,
               const MemoryModel& memory)
      : s_(s), placement_(stage_to_rank), opt_(opt), memory_(memory) {}

  std::uint32_t window() const { return window_; }

  SimAnalysis run(double memory_cap) {
    scan();
    const std::size_t R = s_.rank_count();
    streams_.resize(R * kQueues);
    work_.reserve(streams_.size());
    for (std::uint32_t r = 0; r < R; ++r)
      for (std::uint32_t q = 0; q < kQueues; ++q) {
        Stream& st = streams_[r * kQueues + q];
        st.program = s_.ranks[r].actions.data();
        st.size = static_cast<std::uint32_t>(s_.ranks[r].actions.size());
        st.cursor = next_on_queue(st, q, 0);
        work_.push_back(r * kQueues + q);
      }
    window_ = 16;
    while (window_ < 2 * R && window_ < microbatches_) window_ *= 2;
    slots_.assign(std::size_t{window_} * stages_ * kKeyKinds, Slot{});
    folds_.resize(R);
    for (std::size_t r = 0; r < R; ++r) {
      double base = r < memory_.fixed_per_rank.size() ? memory_.fixed_per_rank[r] : 0.0;
      folds_[r].level = folds_[r].peak = base;
    }
    while (!work_.empty()) {
      std::uint32_t id = work_.back();
      work_.pop_back();
      advance(id);
    }
    for (const Stream& st : streams_)
      if (st.cursor != kNone) throw Fallback{};
    return finish_analysis(memory_cap);
  }

 private:
  // One pass over the leaves: sizes (as timed.cpp and compute_memory infer them), whether comms
  // are explicit, and how many actions name each microbatch.
  void scan() {
    std::uint32_t max_stage = 0, max_mb = 0;
    bool any_stage = false, any_mb = false;
    const std::size_t steps = s_.step_count();
    const double limit = 16.0 * double(steps + 64);  // timed.cpp's bound for a dense grid
    auto leaf = [&](const Action& a) {
      if (a.has_stage()) {
        any_stage = true;
        max_stage = std::max<std::uint32_t>(max_stage, a.stage);
      }
      if (a.has_microbatch()) {
        const std::uint32_t m = a.microbatch();
        if (!any_mb || m > max_mb) {
          if (double(m) >= limit) throw Fallback{};
          any_mb = true;
          max_mb = m;
          if (m >= remaining_.size()) remaining_.resize(std::max<std::size_t>(m + 1, 2 * remaining_.size()), 0);
        }
        ++remaining_[m];
      }
    };
    for (const auto& r : s_.ranks)
      for (const Action& a : r.actions) {
        if (a.is_idle()) continue;
        explicit_comms_ = explicit_comms_ || is_send_recv(a.kind);
        if (a.is_container()) {
          for (const Action& sub : s_.subs(a)) leaf(sub);
        } else {
          leaf(a);
        }
      }
    const std::uint32_t inferred_stages = any_stage ? max_stage + 1 : 0;
    stages_ = std::max<std::uint32_t>(s_.num_stages, inferred_stages);
    microbatches_ = std::max<std::uint32_t>(s_.num_microbatches, any_mb ? max_mb + 1 : 0);
    if (double(stages_) * double(microbatches_) > limit) throw Fallback{};
    remaining_.resize(std::size_t{microbatches_} + 1, 0);
    lo_ = 0;
    while (lo_ < microbatches_ && remaining_[lo_] == 0) ++lo_;
    // compute_memory's sizes use the stated stage count, else the inferred one.
    const std::uint32_t mem_stages = s_.num_stages ? s_.num_stages : inferred_stages;
    act_.resize(stages_);
    wgt_.resize(stages_);
    for (std::uint32_t st = 0; st < stages_; ++st) {
      act_[st] = memory_.activation_of(st, s_.rank_count(), mem_stages);
      wgt_[st] = memory_.weight_grad_of(st, s_.rank_count(), mem_stages);
    }
  }

  static bool on_queue(const Action& a, std::uint32_t q, bool blocking) {
    if (a.is_idle()) return false;
    const bool comm = !blocking && is_send_recv(a.kind);
    return (q == 1) == comm;
  }
  std::uint32_t next_on_queue(const Stream& st, std::uint32_t q, std::uint32_t from) const {
    for (std::uint32_t i = from; i < st.size; ++i)
      if (on_queue(st.program[i], q, opt_.blocking_comms)) return i;
    return kNone;
  }

  // The slot of (kind, stage, mb), or nullptr when no such event can exist.
  Slot* slot(KeyKind kind, std::int64_t stage, std::uint32_t mb) {
    if (stage < 0 || stage >= stages_ || mb >= microbatches_) return nullptr;
    if (mb < lo_) throw Fallback{};  // cannot happen: its reader or writer names mb
    if (mb - lo_ >= window_) grow(mb);
    Slot& sl = slots_[(std::size_t{mb & (window_ - 1)} * stages_ + std::size_t(stage)) * kKeyKinds + kind];
    if (sl.tag != mb) sl = Slot{0, mb, kNone, kNone, kAbsent};
    return &sl;
  }

  void grow(std::uint32_t mb) {
    std::uint32_t w = window_;
    while (mb - lo_ >= w) w *= 2;
    std::vector<Slot> next(std::size_t{w} * stages_ * kKeyKinds, Slot{});
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      const Slot& sl = slots_[i];
      if (sl.tag == kNone || sl.tag < lo_ || sl.tag - lo_ >= window_) continue;  // empty or dead
      const std::size_t rest = i % (std::size_t{stages_} * kKeyKinds);
      next[std::size_t{sl.tag & (w - 1)} * stages_ * kKeyKinds + rest] = sl;
    }
    slots_ = std::move(next);
    window_ = w;
  }

  void wake(Slot& sl) {
    for (std::uint32_t id = sl.waiters; id != kNone;) {
      std::uint32_t next = streams_[id].wait_next;
      streams_[id].wait_next = kNone;
      work_.push_back(id);
      id = next;
    }
    sl.waiters = kNone;
  }
  void wait(std::uint32_t id, Slot* sl) {
    streams_[id].wait_next = sl->waiters;
    sl->waiters = id;
  }

  // Needs the event in `sl` done; `extra` (a transfer) is added to its time. Sets `missing`.
  bool need_done(Ready& r, Slot* sl, ByClass cls, double extra = 0) {
    if (sl == nullptr) return true;
    if (sl->state != kDone) {
      missing_ = sl;
      return false;
    }
    r.take(sl->time + extra, By{sl->time, sl->owner / kQueues, cls});
    return true;
  }

  double transfer(std::uint32_t stage, bool forward, std::uint32_t from, std::uint32_t to) const {
    return from == to ? 0.0 : opt_.comm.transfer_time(stage, forward, from, to);
  }

  bool compute_deps(Ready& r, const Action& a, std::uint32_t rank) {
    if (!a.has_stage() || !a.has_microbatch()) return true;
    const std::uint32_t s = a.stage, m = a.microbatch();
    auto rank_of = [&](std::uint32_t stage) { return stage < placement_.size() ? placement_[stage] : rank; };
    switch (a.kind) {
      case ActionKind::F: {
        if (s == 0) return true;
        if (rank_of(s - 1) == rank || !explicit_comms_)
          return need_done(r, slot(kF, s - 1, m), ByClass::Other, transfer(s - 1, true, rank_of(s - 1), rank));
        return need_done(r, slot(kRecvF, s, m), ByClass::Comm);
      }
      case ActionKind::I:
      case ActionKind::B: {
        if (!need_done(r, slot(kF, s, m), ByClass::Other)) return false;
        if (s + 1 >= stages_) return true;
        if (rank_of(s + 1) == rank || !explicit_comms_)
          return need_done(r, slot(kBwd, s + 1, m), ByClass::Other, transfer(s + 1, false, rank_of(s + 1), rank));
        return need_done(r, slot(kRecvB, s, m), ByClass::Comm);
      }
      case ActionKind::W: return need_done(r, slot(kBwd, s, m), ByClass::Other);
      default: return true;
    }
  }

  void raise_done(Slot* sl, std::uint32_t id, double end) {
    if (sl == nullptr) return;
    if (sl->state != kAbsent) throw Fallback{};  // raised twice: a duplicated action
    sl->state = kDone;
    sl->time = end;
    sl->owner = id;
    wake(*sl);
  }
  void publish_compute(const Action& a, std::uint32_t id, double end) {
    if (!a.has_stage() || !a.has_microbatch()) return;
    if (a.kind == ActionKind::F) raise_done(slot(kF, a.stage, a.microbatch()), id, end);
    if (a.kind == ActionKind::I || a.kind == ActionKind::B) raise_done(slot(kBwd, a.stage, a.microbatch()), id, end);
  }

  void advance(std::uint32_t id) {
    Stream& st = streams_[id];
    const std::uint32_t rank = id / kQueues, q = id % kQueues;
    while (st.cursor != kNone) {
      const Action& a = st.program[st.cursor];
      if (st.head != kDone && !step(id, st, a, rank)) return;
      if (st.head != kDone) return;  // posted, waiting for its partner
      fold(rank, q, a, st.head_start, st.head_end, st.head_by);
      st.free_at = st.head_end;
      st.last = By{st.head_end, rank, is_send_recv(a.kind) ? ByClass::Comm : ByClass::Other};
      st.head = kAbsent;
      st.cursor = next_on_queue(st, q, st.cursor + 1);
    }
  }

  bool step(std::uint32_t id, Stream& st, const Action& a, std::uint32_t rank) {
    Ready r;
    r.take(st.free_at, st.last);
    if (is_send_recv(a.kind)) return step_comm(id, st, a, r, rank);
    if (a.is_container()) {
      for (const Action& sub : s_.subs(a))
        if (!compute_deps(r, sub, rank)) return wait(id, missing_), false;
    } else if (!compute_deps(r, a, rank)) {
      return wait(id, missing_), false;
    }
    const double end = r.time + opt_.costs.duration(s_, a);
    st.head = kDone;
    st.head_start = r.time;
    st.head_end = end;
    st.head_by = r.by;
    if (a.is_container()) {
      for (const Action& sub : s_.subs(a)) publish_compute(sub, id, end);
    } else {
      publish_compute(a, id, end);
    }
    return true;
  }

  bool step_comm(std::uint32_t id, Stream& st, const Action& a, Ready& r, std::uint32_t rank) {
    if (!a.has_microbatch()) {  // malformed: a comm with nothing to move finishes at once
      st.head = kDone;
      st.head_start = st.head_end = r.time;
      st.head_by = r.by;
      return true;
    }
    const std::int64_t s = a.stage;
    const std::uint32_t m = a.microbatch();
    const bool forward = a.kind == ActionKind::SendF || a.kind == ActionKind::RecvF;
    const bool is_send = a.kind == ActionKind::SendF || a.kind == ActionKind::SendB;
    if (is_send && st.head == kAbsent) {
      if (!need_done(r, slot(forward ? kF : kBwd, s, m), ByClass::Other)) return wait(id, missing_), false;
    }
    const KeyKind own = forward ? (is_send ? kSendF : kRecvF) : (is_send ? kSendB : kRecvB);
    if (st.head == kAbsent) {
      st.head = kPosted;
      st.head_start = r.time;
      st.head_by = r.by;
      if (Slot* sl = slot(own, s, m)) {
        if (sl->state != kAbsent) throw Fallback{};  // posted twice
        sl->state = kPosted;
        sl->time = r.time;
        sl->owner = id;
        wake(*sl);
      }
    }
    const std::int64_t partner_stage = is_send ? (forward ? s + 1 : s - 1) : (forward ? s - 1 : s + 1);
    const KeyKind partner_kind = forward ? (is_send ? kRecvF : kSendF) : (is_send ? kRecvB : kSendB);
    Slot* partner = slot(partner_kind, partner_stage, m);
    if (partner == nullptr) {  // no partner can exist: nothing to move
      st.head = kDone;
      st.head_end = st.head_start;
      return true;
    }
    if (partner->state == kAbsent) return wait(id, partner), false;
    if (partner->state == kDone) throw Fallback{};  // its partner paired already: malformed
    // Both posted: the transfer runs from the later post.
    Stream& other = streams_[partner->owner];
    const std::uint32_t other_rank = partner->owner / kQueues;
    const double begin = std::max(st.head_start, partner->time);
    const double end =
        is_send ? begin + transfer(static_cast<std::uint32_t>(s), forward, rank, other_rank)
                : begin + transfer(static_cast<std::uint32_t>(partner_stage), forward, other_rank, rank);
    st.head = other.head = kDone;
    st.head_end = other.head_end = end;
    Slot* mine = slot(own, s, m);  // the ring may have grown since `partner` was taken
    partner = slot(partner_kind, partner_stage, m);
    Slot* recv = is_send ? partner : mine;
    Slot* send = is_send ? mine : partner;
    for (Slot* sl : {recv, send}) {
      if (sl == nullptr) continue;
      sl->state = kDone;
      sl->time = end;
      wake(*sl);
    }
    return true;
  }

  // A finished action, folded into analyze()'s and compute_memory()'s accounts in program order.
  void fold(std::uint32_t rank, std::uint32_t q, const Action& a, double start, double end, const By& by) {
    makespan_ = std::max(makespan_, end);
    release(a);
    if (q != 0) return;
    RankFold& f = folds_[rank];
    const double dur = end - start;
    if (dur > 0 && !is_send_recv(a.kind)) {
      RankUsage& u = f.usage;
      if (!f.any) {
        u.first_start = start;
        u.warmup = start;
        f.any = true;
      } else if (start > f.prev_end) {
        const double gap = start - f.prev_end;
        if (by.cls == ByClass::None) {
          u.dependency_wait += gap;
        } else if (by.cls == ByClass::Comm) {
          u.comm_wait += gap;
        } else if (by.rank != rank && by.end < start) {
          const double transfer = std::min(gap, start - by.end);
          u.comm_wait += transfer;
          u.dependency_wait += gap - transfer;
        } else {
          u.dependency_wait += gap;
        }
      }
      u.busy += dur;
      f.prev_end = std::max(f.prev_end, end);
      u.last_end = f.prev_end;
    }
    // Memory: events before this action's start are final (later ones are all at or after it).
    if (!f.pending.empty()) flush(f, start);
    auto add = [&](const Action& x) {
      if (!x.has_stage()) return;
      switch (x.kind) {
        case ActionKind::F: f.pending.push_back({start, act_[x.stage]}); break;
        case ActionKind::I: f.pending.push_back({end, -(act_[x.stage] - wgt_[x.stage])}); break;
        case ActionKind::W: f.pending.push_back({end, -wgt_[x.stage]}); break;
        case ActionKind::B: f.pending.push_back({end, -act_[x.stage]}); break;
        default: break;
      }
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
    for (; n < p.size() && p[n].time < before; ++n) {
      f.level += p[n].delta;
      if (f.level > f.peak + 1e-12) {
        f.peak = f.level;
        f.peak_time = p[n].time;
      }
    }
    p.erase(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(n));
  }

  // The action no longer needs its microbatch's events.
  void release(const Action& a) {
    auto one = [&](const Action& x) {
      if (!x.has_microbatch()) return;
      --remaining_[x.microbatch()];
    };
    if (a.is_container()) {
      for (const Action& sub : s_.subs(a)) one(sub);
    } else {
      one(a);
    }
    while (lo_ < microbatches_ && remaining_[lo_] == 0) ++lo_;
  }

  SimAnalysis finish_analysis(double memory_cap) {
    SimAnalysis a;
    a.makespan = makespan_;
    a.memory_cap = memory_cap;
    const std::size_t R = folds_.size();
    a.ranks.resize(R);
    a.memory.in_bytes = memory_.in_bytes;
    a.memory.per_rank.resize(R);
    a.memory.peak.resize(R);
    a.memory.peak_time.resize(R);
    double total_busy = 0, max_span = 0, max_gap = 0;
    for (std::size_t r = 0; r < R; ++r) {
      RankFold& f = folds_[r];
      RankUsage& u = f.usage;
      u.cooldown = f.any ? makespan_ - u.last_end : makespan_;
      total_busy += u.busy;
      const double span = f.any ? u.last_end - u.first_start : 0;
      max_span = std::max(max_span, span);
      max_gap = std::max(max_gap, span - u.busy);
      a.ranks[r] = u;
      flush(f, INFINITY);
      a.memory.peak[r] = f.peak;
      a.memory.peak_time[r] = f.peak_time;
    }
    a.bubble_global = (R && makespan_ > 0) ? 1.0 - total_busy / (double(R) * makespan_) : 0.0;
    a.bubble_per_stage = max_span > 0 ? max_gap / max_span : 0.0;
    return a;
  }

  const Schedule& s_;
  const std::vector<std::uint32_t>& placement_;
  const TimedOptions& opt_;
  const MemoryModel& memory_;
  std::uint32_t stages_ = 0, microbatches_ = 0;
  bool explicit_comms_ = false;
  std::vector<std::uint32_t> remaining_;
  std::uint32_t lo_ = 0, window_ = 16;
  std::vector<Slot> slots_;
  std::vector<Stream> streams_;
  std::vector<std::uint32_t> work_;
  Slot* missing_ = nullptr;
  std::vector<double> act_, wgt_;
  std::vector<RankFold> folds_;
  double makespan_ = 0;
};

}  // namespace

SimAnalysis simulate_aggregates(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                const TimedOptions& opt, const MemoryModel& memory, double memory_cap,
                                AggregateStats* stats) {
  AggregateStats ignored;
  AggregateStats& st = stats ? *stats : ignored;
  st = AggregateStats{};
  try {
    AggregateRun run(s, stage_to_rank, opt, memory);
    SimAnalysis a = run.run(memory_cap);
    st.window = run.window();
    return a;
  } catch (const Fallback&) {
    st.fell_back = true;
    SimAnalysis a = analyze(s, simulate_timed(s, stage_to_rank, opt), memory, memory_cap);
    for (auto& points : a.memory.per_rank) points.clear();
    return a;
  }
}

}  // namespace ppsched
