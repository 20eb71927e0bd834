// The megatron runtime model (megatron.hpp). Each rank's program is cut into steps; a p2p call
// comes before each step (the previous step's sends, this step's receives) and one after the last.
// Ranks run forward from a worklist: a rank that needs a time not known yet (its partner has not
// issued the matching call) waits on that message and is woken when the call is issued.
#include "sim/megatron.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "ir/user_error.hpp"
#include "model/gpu.hpp"
#include "sim/timed_rules.hpp"

namespace ppsched {

namespace {

bool splits_backward(const Schedule& s) {
  auto split = [](const Action& a) { return a.kind == ActionKind::I || a.kind == ActionKind::W; };
  for (const auto& r : s.ranks)
    for (const Action& a : r.actions) {
      if (split(a)) return true;
      if (a.is_container())
        for (const Action& sub : s.subs(a))
          if (split(sub)) return true;
    }
  return false;
}

constexpr std::uint32_t kNone = Timeline::kNone;
constexpr double kUnknown = -1.0;

// A message: one stage's output (forward) or input gradient (backward) for one microbatch, moving
// between two ranks. Indexed by (sending stage, microbatch, direction).
struct Message {
  double send_issue = kUnknown, recv_issue = kUnknown;  ///< when each side's call was issued
  std::uint32_t producer = kNone;                       ///< the entry that produced the data
  std::uint32_t from = 0, to = 0;                       ///< ranks
  std::uint32_t waiters = kNone;                        ///< ranks waiting for an issue (list via next_waiter_)
  double transfer = 0;
  bool ready() const { return send_issue >= 0 && recv_issue >= 0; }
  double arrival() const { return std::max(send_issue, recv_issue) + transfer; }
};

struct Step {
  std::uint32_t first = 0, last = 0;  ///< entries [first, last)
};

class MegatronSim {
 public:
  MegatronSim(const Schedule& s, const std::vector<std::uint32_t>& placement, const TimedOptions& opt,
              const RuntimeParams& params, Optimizer optimizer)
      : s_(s), placement_(placement), opt_(opt), overhead_(params.p2p_call_overhead_us) {
    if (params.p2p_kernel_sms > 0) {
      const GpuSpec* gpu = find_gpu(params.gpu);
      if (!gpu || params.p2p_kernel_sms >= gpu->sms)
        throw UserError("runtime parameters: p2p_kernel_sms " + std::to_string(params.p2p_kernel_sms) +
                        " needs a known gpu with more SMs (gpu '" + params.gpu + "')");
      kernel_share_ = params.p2p_kernel_sms / gpu->sms;
    }
    if (has_comms(s))
      throw UserError("--runtime megatron issues its own sends and receives; give it a compute-only schedule");
    sync_ = megatron_path(s, optimizer) == MegatronPath::Synchronous;
    stages_ = stages_in_use(s);
    microbatches_ = microbatches_in_use(s);
    std::uint32_t max_per_rank = 0;
    std::vector<std::uint32_t> per_rank(s.rank_count(), 0);
    for (std::uint32_t st = 0; st < placement_.size() && st < stages_; ++st)
      if (placement_[st] < per_rank.size()) max_per_rank = std::max(max_per_rank, ++per_rank[placement_[st]]);
    pair_forward_backward_ = sync_ && max_per_rank > 1;
  }

  Timeline run() {
    build();
    for (std::uint32_t r = 0; r < ranks(); ++r) work_.push_back(r);
    while (!work_.empty()) {
      const std::uint32_t r = work_.back();
      work_.pop_back();
      advance(r);
    }
    for (std::uint32_t r = 0; r < ranks(); ++r)
      if (!finished(r)) throw_deadlock();
    for (std::size_t e = 0; e < t_.size(); ++e) t_.makespan = std::max(t_.makespan, t_.end[e]);
    return std::move(t_);
  }

 private:
  std::uint32_t ranks() const { return static_cast<std::uint32_t>(s_.rank_count()); }
  const Action& action(std::uint32_t e) const { return s_.ranks[rank_of_entry_[e]].actions[t_.step[e]]; }
  std::uint32_t rank_of_stage(std::uint32_t stage, std::uint32_t fallback) const {
    return stage < placement_.size() ? placement_[stage] : fallback;
  }

  // Message slot of (sending stage, microbatch, direction), or kNone outside the pipeline.
  std::uint32_t message_index(std::int64_t stage, std::uint32_t mb, bool forward) const {
    if (stage < 0 || stage >= stages_ || mb >= microbatches_) return kNone;
    return static_cast<std::uint32_t>((std::uint64_t(stage) * microbatches_ + mb) * 2 + (forward ? 0 : 1));
  }

  // The messages a compute (sub-)action on `rank` consumes (`in`) or produces (`out`).
  template <class Fn>
  void each_message(const Action& a, std::uint32_t rank, bool in, Fn&& fn) const {
    auto one = [&](const Action& x) {
      if (!x.has_stage() || !x.has_microbatch()) return;
      const std::int64_t st = x.stage;
      const std::uint32_t m = x.microbatch();
      const bool fwd = x.kind == ActionKind::F;
      const bool bwd = x.kind == ActionKind::B || x.kind == ActionKind::I;
      if (!fwd && !bwd) return;
      // forward: in from stage-1, out to stage+1; backward: in from stage+1, out to stage-1
      const std::int64_t other = in ? (fwd ? st - 1 : st + 1) : (fwd ? st + 1 : st - 1);
      if (other < 0 || other >= stages_) return;
      if (rank_of_stage(static_cast<std::uint32_t>(other), rank) == rank) return;  // same rank: no message
      const std::int64_t sender = in ? other : st;
      const std::uint32_t k = message_index(sender, m, fwd);
      if (k != kNone) fn(k, static_cast<std::uint32_t>(other));
    };
    if (a.is_container()) {
      for (const Action& sub : s_.subs(a)) one(sub);
    } else {
      one(a);
    }
  }

  void build() {
    const std::uint32_t R = ranks();
    t_.rank_begin.assign(1, 0);
    for (std::uint32_t r = 0; r < R; ++r) {
      const auto& acts = s_.ranks[r].actions;
      for (std::uint32_t i = 0; i < acts.size(); ++i) {
        if (acts[i].is_idle()) continue;
        t_.step.push_back(i);
        rank_of_entry_.push_back(r);
      }
      t_.rank_begin.push_back(static_cast<std::uint32_t>(t_.step.size()));
    }
    const std::size_t n = t_.step.size();
    t_.start.assign(n, 0.0);
    t_.end.assign(n, 0.0);
    t_.stream.assign(n, Stream::Compute);
    t_.released_by.assign(n, kNone);
    t_.peer.assign(n, kNone);
    done_.assign(n, false);
    messages_.assign(std::size_t(stages_) * microbatches_ * 2, Message{});
    completion_.assign(std::size_t(stages_) * microbatches_ * 2, kNone);
    steps_.assign(R, {});
    for (std::uint32_t r = 0; r < R; ++r) {
      for (std::uint32_t e = t_.rank_begin[r]; e < t_.rank_begin[r + 1];) {
        std::uint32_t last = e + 1;
        // Megatron's interleaved schedule sends and receives once per forward-backward pair.
        if (pair_forward_backward_ && last < t_.rank_begin[r + 1] && action(e).kind == ActionKind::F &&
            action(last).kind == ActionKind::B)
          ++last;
        steps_[r].push_back({e, last});
        e = last;
      }
      for (std::uint32_t e = t_.rank_begin[r]; e < t_.rank_begin[r + 1]; ++e)
        each_message(action(e), r, false, [&](std::uint32_t k, std::uint32_t to) {
          messages_[k].producer = e;
          messages_[k].from = r;
          messages_[k].to = to;
        });
    }
    for (std::size_t k = 0; k < messages_.size(); ++k) {
      Message& msg = messages_[k];
      if (msg.producer == kNone) continue;
      const auto stage = static_cast<std::uint32_t>(k / 2 / microbatches_);
      msg.transfer = opt_.comm.transfer_time(stage, k % 2 == 0, msg.from, msg.to);
    }
    state_.assign(R, RankState{});
    next_waiter_.assign(R, kNone);
  }

  struct RankState {
    std::size_t call = 0;  ///< the call (before step `call`) or step being worked on
    /// Asynchronous: the messages of its issued calls that may still be in flight (NCCL holds SMs).
    std::vector<std::uint32_t> in_flight;
    bool issued = false;         ///< that call has been issued
    bool waited = false;         ///< synchronous: and waited for
    std::uint32_t next = kNone;  ///< the next entry of step `call` to run (kNone: not started)
    double time = 0;             ///< when the compute stream is free
    std::uint32_t last = kNone;  ///< the entry that ran last (or released the stream)
    std::uint32_t blocked_entry = kNone;
    // What it waits for, put into words only if the run deadlocks: a message (and whether for
    // its receive to be posted), or an action later in its own program.
    std::uint32_t waiting_on = kNone;
    bool waits_for_receive_post = false, waits_on_itself = false;
  };

  bool finished(std::uint32_t r) const { return state_[r].call > steps_[r].size(); }

  // The messages of the call before step `c` (c = steps: the one after the last step).
  template <class Fn>
  void call_messages(std::uint32_t r, std::size_t c, Fn&& fn) const {
    if (c > 0) {
      const Step& prev = steps_[r][c - 1];
      for (std::uint32_t e = prev.first; e < prev.last; ++e)
        each_message(action(e), r, false, [&](std::uint32_t k, std::uint32_t) { fn(k, true); });
    }
    auto receives = [&](std::size_t step) {
      if (step >= steps_[r].size()) return;
      const Step& here = steps_[r][step];
      for (std::uint32_t e = here.first; e < here.last; ++e)
        each_message(action(e), r, true, [&](std::uint32_t k, std::uint32_t) { fn(k, false); });
    };
    if (sync_) {
      receives(c);
    } else {  // the Zero Bubble runtime posts a receive one compute action before its consumer's
      if (c == 0) receives(0);
      receives(c + 1);
    }
  }

  void wait_on(std::uint32_t r, std::uint32_t k, std::uint32_t entry, bool for_receive_post) {
    state_[r].blocked_entry = entry;
    state_[r].waiting_on = k;
    state_[r].waits_for_receive_post = for_receive_post;
    next_waiter_[r] = messages_[k].waiters;
    messages_[k].waiters = r;
  }

  void wake(std::uint32_t k) {
    for (std::uint32_t r = messages_[k].waiters; r != kNone;) {
      const std::uint32_t next = next_waiter_[r];
      next_waiter_[r] = kNone;
      work_.push_back(r);
      r = next;
    }
    messages_[k].waiters = kNone;
  }

  std::string describe(std::uint32_t k) const {
    const auto stage = k / 2 / microbatches_;
    const auto mb = k / 2 % microbatches_;
    return fmt::format("the {} of stage {}, microbatch {} (rank {} to rank {})", k % 2 == 0 ? "activation" : "gradient",
                       stage, mb, messages_[k].from, messages_[k].to);
  }

  // The local completion a compute (sub-)action needs on its own rank, or true when met.
  bool local_deps(const Action& x, std::uint32_t r, double& start, std::uint32_t& by) const {
    if (!x.has_stage() || !x.has_microbatch()) return true;
    const std::uint32_t st = x.stage, m = x.microbatch();
    auto need = [&](std::int64_t stage, bool forward) {
      if (stage < 0 || stage >= stages_) return true;
      if (rank_of_stage(static_cast<std::uint32_t>(stage), r) != r) return true;  // a message instead
      const std::uint32_t e = completion_[(std::size_t(stage) * microbatches_ + m) * 2 + (forward ? 0 : 1)];
      if (e == kNone || !done_[e]) return false;
      if (t_.end[e] > start) {
        start = t_.end[e];
        by = e;
      }
      return true;
    };
    switch (x.kind) {
      case ActionKind::F:
        return st == 0 || need(std::int64_t(st) - 1, true);
      case ActionKind::I:
      case ActionKind::B:
        if (!need(st, true)) return false;
        return st + 1 >= stages_ || need(std::int64_t(st) + 1, false);
      case ActionKind::W:
        return need(st, false);
      default:
        return true;
    }
  }

  void publish_local(const Action& a, std::uint32_t e) {
    auto one = [&](const Action& x) {
      if (!x.has_stage() || !x.has_microbatch() || x.stage >= stages_ || x.microbatch() >= microbatches_) return;
      const bool fwd = x.kind == ActionKind::F;
      if (!fwd && x.kind != ActionKind::B && x.kind != ActionKind::I) return;
      completion_[(std::size_t(x.stage) * microbatches_ + x.microbatch()) * 2 + (fwd ? 0 : 1)] = e;
    };
    if (a.is_container()) {
      for (const Action& sub : s_.subs(a)) one(sub);
    } else {
      one(a);
    }
  }

  // When a compute action of `duration` started at `start` ends: at full speed, except while an
  // asynchronous call of the rank is in flight, when NCCL's kernel holds kernel_share_ of the SMs
  // and compute runs at 1 - kernel_share_ of its speed. The calls are FIFO on one NCCL stream, so
  // one is in flight until the last of them completes. A call whose partner has not issued its
  // side yet (not known at this point of the run) counts as in flight through the action.
  double compute_end(RankState& st, double start, double duration) {
    if (kernel_share_ <= 0 || st.in_flight.empty()) return start + duration;
    double busy_until = start;
    std::size_t kept = 0;
    for (std::uint32_t k : st.in_flight) {
      const Message& msg = messages_[k];
      const double done = msg.ready() ? msg.arrival() : std::numeric_limits<double>::infinity();
      if (done <= start) continue;  // completed: its kernel has left the SMs
      st.in_flight[kept++] = k;
      busy_until = std::max(busy_until, done);
    }
    st.in_flight.resize(kept);
    const double slowed = duration / (1 - kernel_share_);
    if (busy_until >= start + slowed) return start + slowed;
    return busy_until + (duration - (busy_until - start) * (1 - kernel_share_));
  }

  void advance(std::uint32_t r) {
    RankState& st = state_[r];
    while (!finished(r)) {
      const std::size_t c = st.call;
      if (!st.issued) {
        bool any = false;
        call_messages(r, c, [&](std::uint32_t k, bool send) {
          (send ? messages_[k].send_issue : messages_[k].recv_issue) = st.time;
          any = true;
          if (kernel_share_ > 0) st.in_flight.push_back(k);
          wake(k);
        });
        st.issued = true;
        // The asynchronous runtime pays for issuing a call on the compute stream right away.
        if (any && !sync_) st.time += overhead_;
        st.waited = !sync_ || !any;
      }
      if (!st.waited) {  // synchronous: the host waits for every message of the call
        double end = st.time;
        std::uint32_t by = st.last;
        bool missing = false;
        call_messages(r, c, [&](std::uint32_t k, bool send) {
          if (missing) return;
          const Message& msg = messages_[k];
          if (!msg.ready()) {
            wait_on(r, k, c < steps_[r].size() ? steps_[r][c].first : kNone, send);
            missing = true;
            return;
          }
          if (msg.arrival() > end) {
            end = msg.arrival();
            if (!send) by = msg.producer;
          }
        });
        if (missing) return;
        st.time = end + overhead_;
        st.last = by;
        st.waited = true;
      }
      if (c == steps_[r].size()) {  // the call after the last step: done
        st.call = c + 1;
        break;
      }
      const Step& step = steps_[r][c];
      if (st.next == kNone) st.next = step.first;
      while (st.next < step.last) {
        const std::uint32_t e = st.next;
        const Action& a = action(e);
        double start = st.time;
        std::uint32_t by = st.last;
        bool missing = false;
        each_message(a, r, true, [&](std::uint32_t k, std::uint32_t) {
          if (missing) return;
          const Message& msg = messages_[k];
          if (!msg.ready()) {
            wait_on(r, k, e, false);
            missing = true;
            return;
          }
          if (msg.arrival() > start) {
            start = msg.arrival();
            by = msg.producer;
          }
        });
        if (missing) return;
        bool local_ok = true;
        if (a.is_container()) {
          for (const Action& sub : s_.subs(a)) local_ok = local_ok && local_deps(sub, r, start, by);
        } else {
          local_ok = local_deps(a, r, start, by);
        }
        if (!local_ok) {  // a same-rank dependency later in this rank's program: never met
          st.blocked_entry = e;
          st.waits_on_itself = true;
          return;
        }
        t_.start[e] = start;
        t_.end[e] = compute_end(st, start, action_duration(opt_.costs, s_, a));
        t_.released_by[e] = by;
        done_[e] = true;
        publish_local(a, e);
        st.time = t_.end[e];
        st.last = e;
        st.next = e + 1;
      }
      st.call = c + 1;
      st.issued = false;
      st.next = kNone;
    }
  }

  [[noreturn]] void throw_deadlock() {
    std::vector<TimedDeadlock::Stuck> stuck;
    for (std::uint32_t r = 0; r < ranks(); ++r) {
      if (finished(r)) continue;
      const RankState& st = state_[r];
      std::size_t step = s_.ranks[r].actions.size();
      if (st.blocked_entry != kNone) step = t_.step[st.blocked_entry];
      std::string why = "nothing (the rank never ran)";
      if (st.waits_on_itself)
        why = "an action later in its own program";
      else if (st.waiting_on != kNone)
        why = describe(st.waiting_on) + (st.waits_for_receive_post ? ", until its receive is posted" : "");
      stuck.push_back({r, step, why});
    }
    throw TimedDeadlock(std::move(stuck), std::move(t_));
  }

  const Schedule& s_;
  const std::vector<std::uint32_t>& placement_;
  const TimedOptions& opt_;
  const double overhead_;
  double kernel_share_ = 0;  ///< of the SMs, held by an in-flight asynchronous call's NCCL kernel
  bool sync_ = true, pair_forward_backward_ = false;
  std::uint32_t stages_ = 0, microbatches_ = 0;
  Timeline t_;
  std::vector<std::uint32_t> rank_of_entry_;
  std::vector<bool> done_;
  std::vector<Message> messages_;
  std::vector<std::uint32_t> completion_;  ///< (stage, mb, forward?) -> entry that completed it
  std::vector<std::vector<Step>> steps_;
  std::vector<RankState> state_;
  std::vector<std::uint32_t> next_waiter_, work_;
};

}  // namespace

MegatronPath megatron_path(const Schedule& s, Optimizer o) {
  return o == Optimizer::Sync && !splits_backward(s) ? MegatronPath::Synchronous : MegatronPath::ZeroBubbleRuntime;
}

Timeline simulate_megatron(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank, const TimedOptions& opt,
                           const RuntimeParams& params, Optimizer optimizer) {
  return MegatronSim(s, stage_to_rank, opt, params, optimizer).run();
}

}  // namespace ppsched
