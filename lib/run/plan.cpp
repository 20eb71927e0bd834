#include "run/plan.hpp"

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <unordered_map>

#include "ir/action_text.hpp"
#include "passes/key_table.hpp"
#include "sim/timeline.hpp"

namespace ppsched::run {

namespace {

// What a launch publishes for others to depend on. Stages and microbatches fit in 16 + 32 bits.
enum KeyKind : std::uint64_t { kF, kBwd, kSendPostF, kSendPostB, kRecvCopyF, kRecvCopyB, kStash };
using Key = std::uint64_t;
Key key(KeyKind k, std::uint64_t stage, std::uint64_t mb) { return (static_cast<Key>(k) << 48) | (stage << 32) | mb; }

constexpr std::uint32_t kNone = 0xFFFFFFFF;

// A rank's device streams are numbered as the simulator's Stream (run/device.hpp).
static_assert(kStreamsPerRank == static_cast<std::uint32_t>(kStreamCount) &&
              static_cast<std::uint32_t>(Stream::Compute) == 0 && static_cast<std::uint32_t>(Stream::Send) == 1 &&
              static_cast<std::uint32_t>(Stream::Recv) == 2);

// Values by key, in a KeyTable over the schedule's stage x microbatch grid (passes/key_table.hpp).
// What a launch publishes is keyed by its own action's stage and microbatch, so it is in the grid;
// a key outside it (the partner of a SEND past the last stage) has no value.
class KeyValues {
 public:
  KeyValues(std::uint32_t stages, std::uint32_t mbs, std::size_t steps) : table_(stages, mbs, steps, kNoneValue) {}
  std::uint32_t get(Key k) const {
    const std::uint64_t st = (k >> 32) & 0xFFFF, m = k & 0xFFFFFFFF;
    return table_.holds(st, m) ? table_.get(table_.key(static_cast<std::uint32_t>(k >> 48), st, m)) : kNoneValue;
  }
  /// Sets k's value unless it has one (the first publisher wins, as in the simulator).
  void set_once(Key k, std::uint32_t v) {
    if (std::uint32_t& x = at(k); x == kNoneValue) x = v;
  }
  void set(Key k, std::uint32_t v) { at(k) = v; }
  /// Calls f(key, value) for every key of `kind` that has a value.
  template <typename F>
  void for_each(KeyKind kind, F f) const {
    table_.for_each(kind, [&](std::uint64_t st, std::uint64_t m, std::uint32_t v) { f(key(kind, st, m), v); });
  }
  static constexpr std::uint32_t kNoneValue = 0xFFFFFFFF;

 private:
  std::uint32_t& at(Key k) {
    const std::uint64_t st = (k >> 32) & 0xFFFF, m = k & 0xFFFFFFFF;
    if (!table_.holds(st, m)) throw std::logic_error("run plan: a launch publishes a key outside the schedule");
    return table_[table_.key(static_cast<std::uint32_t>(k >> 48), st, m)];
  }
  KeyTable<std::uint32_t, kStash + 1> table_;
};

struct PendingDep {
  std::uint32_t op;
  Key key;
  bool frees_its_buffer;  // the op consumes (and frees) the buffer the depended-on copy allocated
};

class PlanBuilder {
 public:
  PlanBuilder(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank, const PlanOptions& opt)
      : s_(s),
        placement_(stage_to_rank),
        opt_(opt),
        stages_(stages_in_use(s)),
        microbatches_(microbatches_in_use(s)),
        published_(stages_, microbatches_, s.step_count()),
        entry_of_(stages_, microbatches_, s.step_count()) {
    explicit_comms_ = has_comms(s);
  }

  RunPlan build() {
    const auto ranks = static_cast<std::uint32_t>(s_.rank_count());
    plan_.rank_begin.push_back(0);
    for (std::uint32_t r = 0; r < ranks; ++r) {
      const auto& prog = s_.ranks[r].actions;
      for (std::uint32_t step = 0; step < prog.size(); ++step) {
        if (prog[step].is_idle()) continue;
        plan_.entries.push_back(add_action(prog[step], r));
        plan_.entry_step.push_back(step);
      }
      plan_.rank_begin.push_back(static_cast<std::uint32_t>(plan_.entries.size()));
    }
    pair_entries();
    resolve();
    free_leftovers();
    order();
    finish_device_plan();
    return std::move(plan_);
  }

 private:
  struct Op {
    std::uint32_t stream;
    Work work;
    std::string label;
    std::vector<std::uint32_t> deps;  // op indices (creation order)
  };

  std::uint32_t rank_of(std::uint32_t stage, std::uint32_t fallback) const {
    return stage < placement_.size() ? placement_[stage] : fallback;
  }
  std::uint32_t stream(std::uint32_t rank, Stream which) const {
    return stream_of(rank, opt_.blocking_comms ? 0u : static_cast<std::uint32_t>(which));
  }
  // SENDs and RECVs share one stream per rank, in program order, as NCCL's point-to-point ops on
  // one communicator do and as the simulator models them (a RECV posted early holds back the
  // SENDs behind it). Stream 2 (recv) carries only the implicit copies of compute-only schedules.
  std::uint32_t comm_stream(std::uint32_t rank) const { return stream(rank, Stream::Send); }
  double expected(const Action& a) const { return opt_.costs.cost(a.stage, a.kind) * opt_.costs.overlap_factor; }
  std::uint64_t transfer_bytes(std::uint32_t stage, bool forward) const {
    if (stage < opt_.comm.stages.size()) {
      double b = forward ? opt_.comm.stages[stage].activation_bytes : opt_.comm.stages[stage].gradient_bytes;
      if (b > 0) return static_cast<std::uint64_t>(b);
    }
    return opt_.activation_bytes ? opt_.activation_bytes : opt_.shape.boundary_bytes();
  }
  std::uint32_t new_buffer(std::uint32_t rank, std::uint64_t bytes) {
    plan_.device.buffers.push_back({rank, bytes});
    alloc_op_.push_back(kNone);
    free_op_.push_back(kNone);
    return static_cast<std::uint32_t>(plan_.device.buffers.size() - 1);
  }
  void add_alloc(std::uint32_t op, std::uint32_t buffer) {
    Work& w = ops_[op].work;
    w.allocs[w.alloc_count++] = buffer;
    alloc_op_[buffer] = op;
  }
  void add_free(std::uint32_t op, std::uint32_t buffer) {
    if (buffer == kNone || free_op_[buffer] != kNone) return;
    Work& w = ops_[op].work;
    if (w.free_count == std::size(w.frees)) return;  // left for free_leftovers
    w.frees[w.free_count++] = buffer;
    free_op_[buffer] = op;
  }

  std::uint32_t new_op(std::uint32_t stream, const Work& w, std::string label) {
    ops_.push_back({stream, w, std::move(label), {}});
    return static_cast<std::uint32_t>(ops_.size() - 1);
  }
  void publish(Key k, std::uint32_t op) { published_.set_once(k, op); }
  void depend(std::uint32_t op, Key k, bool frees = false) { pending_.push_back({op, k, frees}); }

  Work base_work(const Action& a, std::uint32_t rank, WorkKind kind) const {
    Work w;
    w.kind = kind;
    w.action = a.kind;
    w.rank = rank;
    w.stage = a.has_stage() ? a.stage : 0;
    w.microbatch = a.has_microbatch() ? a.microbatch() : 0;
    w.expected_us = a.has_stage() ? expected(a) : 0.0;
    return w;
  }

  // A copy on the consumer's recv stream for an input that crosses ranks in a compute-only
  // schedule; the consumer depends on it and frees what it received.
  void add_implicit_input(std::uint32_t consumer, std::uint32_t rank, KeyKind producer_kind,
                          std::uint32_t producer_stage, std::uint32_t mb, bool forward) {
    const std::uint32_t from = rank_of(producer_stage, rank);
    Work w;
    w.kind = WorkKind::Copy;
    w.action = forward ? ActionKind::RecvF : ActionKind::RecvB;
    w.rank = rank;
    w.stage = forward ? producer_stage + 1 : producer_stage - 1;
    w.microbatch = mb;
    w.copy_from = from;
    w.copy_bytes = transfer_bytes(producer_stage, forward);
    w.expected_us = opt_.comm.transfer_time(producer_stage, forward, from, rank);
    std::uint32_t copy =
        new_op(stream(rank, Stream::Recv), w,
               std::string(forward ? "copy F" : "copy B") + std::to_string(w.stage) + "," + std::to_string(mb));
    depend(copy, key(producer_kind, producer_stage, mb));
    std::uint32_t buffer = new_buffer(rank, w.copy_bytes);
    add_alloc(copy, buffer);
    ops_[copy].work.output = buffer;
    ops_[consumer].deps.push_back(copy);
    ops_[consumer].work.input = buffer;
    add_free(consumer, buffer);
  }

  // The dependencies of one compute (sub-)action, as sim/timed.cpp's compute_deps.
  void compute_deps(std::uint32_t op, const Action& a, std::uint32_t rank) {
    if (!a.has_stage() || !a.has_microbatch()) return;
    const std::uint32_t st = a.stage, m = a.microbatch();
    switch (a.kind) {
      case ActionKind::F:
        if (st == 0) return;
        if (rank_of(st - 1, rank) == rank) return depend(op, key(kF, st - 1, m));
        if (explicit_comms_) return depend(op, key(kRecvCopyF, st, m), true);
        return add_implicit_input(op, rank, kF, st - 1, m, true);
      case ActionKind::I:
      case ActionKind::B:
        depend(op, key(kF, st, m));
        if (st + 1 >= stages_) return;
        if (rank_of(st + 1, rank) == rank) return depend(op, key(kBwd, st + 1, m));
        if (explicit_comms_) return depend(op, key(kRecvCopyB, st, m), true);
        return add_implicit_input(op, rank, kBwd, st + 1, m, false);
      case ActionKind::W:
        return depend(op, key(kBwd, st, m));
      default:
        return;
    }
  }

  // F allocates the stash; the last backward piece frees it.
  void stash_use(std::uint32_t op, const Action& a, std::uint32_t rank) {
    if (!a.has_stage() || !a.has_microbatch()) return;
    const Key k = key(kStash, a.stage, a.microbatch());
    Work& w = ops_[op].work;
    if (a.kind == ActionKind::F) {
      std::uint32_t b = new_buffer(rank, opt_.shape.stash_bytes());
      add_alloc(op, b);
      ops_[op].work.stash = b;
      published_.set(k, b);
      return;
    }
    const std::uint32_t b = published_.get(k);
    if (b == KeyValues::kNoneValue) return;
    w.stash = b;
    if (a.kind == ActionKind::B || a.kind == ActionKind::W) add_free(op, b);
  }

  void publish_compute(const Action& a, std::uint32_t op) {
    if (!a.has_stage() || !a.has_microbatch()) return;
    if (a.kind == ActionKind::F) publish(key(kF, a.stage, a.microbatch()), op);
    if (a.kind == ActionKind::I || a.kind == ActionKind::B) publish(key(kBwd, a.stage, a.microbatch()), op);
  }

  static WorkKind work_kind(ActionKind k) {
    switch (k) {
      case ActionKind::F:
        return WorkKind::Forward;
      case ActionKind::I:
        return WorkKind::InputGrad;
      case ActionKind::W:
        return WorkKind::WeightGrad;
      case ActionKind::B:
        return WorkKind::FullBackward;
      default:
        return WorkKind::None;
    }
  }

  std::uint32_t add_compute(const Action& a, std::uint32_t rank, const std::string& label) {
    std::uint32_t op = new_op(stream(rank, Stream::Compute), base_work(a, rank, work_kind(a.kind)), label);
    compute_deps(op, a, rank);
    stash_use(op, a, rank);
    publish_compute(a, op);
    return op;
  }

  // Adds the launches of one action; returns its first and last (implicit copies it needs are
  // launches of their own, on the recv stream, and belong to no entry).
  EntrySpans add_action(const Action& a, std::uint32_t rank) {
    const std::string label = action_text(a, s_.sub_actions);
    if (a.is_container()) {
      // Sub-actions run back to back; the first waits for everything any of them needs, so the
      // container starts when all its inputs are there, as in the simulator, and ends as one.
      const std::uint32_t first = static_cast<std::uint32_t>(ops_.size());
      std::uint32_t last = first;
      for (const Action& sub : s_.subs(a)) {
        std::uint32_t op = last = new_op(stream(rank, Stream::Compute), base_work(sub, rank, work_kind(sub.kind)),
                                         label + ":" + action_text(sub, s_.sub_actions));
        compute_deps(first, sub, rank);
        stash_use(op, sub, rank);
      }
      // What its sub-actions produce counts as there when the whole container ends.
      for (const Action& sub : s_.subs(a)) publish_compute(sub, last);
      return {first, last};
    }
    if (!is_send_recv(a.kind)) {
      const std::uint32_t op = add_compute(a, rank, label);
      return {op, op};
    }
    if (!a.has_stage() || !a.has_microbatch()) {  // nothing to move: a marker
      const std::uint32_t op = new_op(comm_stream(rank), base_work(a, rank, WorkKind::None), label);
      return {op, op};
    }
    const std::uint32_t st = a.stage, m = a.microbatch();
    switch (a.kind) {
      case ActionKind::SendF:
      case ActionKind::SendB: {
        const bool fwd = a.kind == ActionKind::SendF;
        Work w = base_work(a, rank, WorkKind::None);
        w.expected_us = 0;
        std::uint32_t post = new_op(comm_stream(rank), w, label);
        depend(post, key(fwd ? kF : kBwd, st, m));
        publish(key(fwd ? kSendPostF : kSendPostB, st, m), post);
        entry_of_.set_once(key(fwd ? kSendPostF : kSendPostB, st, m), static_cast<std::uint32_t>(plan_.entries.size()));
        std::uint32_t done = new_op(comm_stream(rank), w, label + " done");
        // The partner RECV: SEND_F(s) -> RECV_F(s+1), SEND_B(s) -> RECV_B(s-1).
        if (fwd || st > 0) depend(done, key(fwd ? kRecvCopyF : kRecvCopyB, fwd ? st + 1 : st - 1, m));
        return {post, done};
      }
      default: {  // RECV_F, RECV_B: the copy
        const bool fwd = a.kind == ActionKind::RecvF;
        const std::uint32_t partner_stage = fwd ? st - 1 : st + 1;
        Work w = base_work(a, rank, WorkKind::Copy);
        const std::uint32_t from = rank_of(partner_stage, rank);
        w.copy_from = from;
        w.copy_bytes = transfer_bytes(partner_stage, fwd);
        w.expected_us = opt_.comm.transfer_time(partner_stage, fwd, from, rank);
        std::uint32_t copy = new_op(comm_stream(rank), w, label);
        if (fwd ? st > 0 : true) depend(copy, key(fwd ? kSendPostF : kSendPostB, partner_stage, m));
        std::uint32_t buffer = new_buffer(rank, w.copy_bytes);
        add_alloc(copy, buffer);
        ops_[copy].work.output = buffer;
        publish(key(fwd ? kRecvCopyF : kRecvCopyB, st, m), copy);
        entry_of_.set_once(key(fwd ? kRecvCopyF : kRecvCopyB, st, m), static_cast<std::uint32_t>(plan_.entries.size()));
        return {copy, copy};
      }
    }
  }

  // SEND_F(s) <-> RECV_F(s+1) and SEND_B(s) <-> RECV_B(s-1), for the trace's arrows.
  void pair_entries() {
    plan_.entry_peer.assign(plan_.entries.size(), kNoEntry);
    auto pair = [&](Key k, std::uint32_t send) {
      const auto kind = static_cast<KeyKind>(k >> 48);
      const std::uint64_t st = (k >> 32) & 0xFFFF, m = k & 0xFFFFFFFF;
      if (kind == kSendPostB && st == 0) return;
      const std::uint32_t recv =
          entry_of_.get(kind == kSendPostF ? key(kRecvCopyF, st + 1, m) : key(kRecvCopyB, st - 1, m));
      if (recv == KeyValues::kNoneValue || plan_.entry_peer[recv] != kNoEntry) return;
      plan_.entry_peer[send] = recv;
      plan_.entry_peer[recv] = send;
    };
    entry_of_.for_each(kSendPostF, pair);
    entry_of_.for_each(kSendPostB, pair);
  }

  std::string describe(std::uint32_t op) const {
    return "'" + ops_[op].label + "' on rank " + std::to_string(ops_[op].work.rank);
  }

  void resolve() {
    for (const PendingDep& d : pending_) {
      const std::uint32_t producer = published_.get(d.key);
      if (producer == KeyValues::kNoneValue) {
        const auto kind = static_cast<KeyKind>(d.key >> 48);
        static constexpr const char* kWhat[] = {"F", "backward", "SEND_F", "SEND_B", "RECV_F", "RECV_B", ""};
        throw PlanError(describe(d.op) + " needs " + kWhat[kind] + " of stage " +
                        std::to_string((d.key >> 32) & 0xFFFF) + ", microbatch " + std::to_string(d.key & 0xFFFFFFFF) +
                        ", which no rank runs");
      }
      ops_[d.op].deps.push_back(producer);
      if (d.frees_its_buffer) {
        const std::uint32_t received = ops_[producer].work.output;
        ops_[d.op].work.input = received;
        add_free(d.op, received);
      }
    }
  }

  // Buffers nothing frees (a stash without its W, a received buffer nobody consumes) are freed
  // at the end of the stream that allocated them, so every iteration starts empty.
  void free_leftovers() {
    std::unordered_map<std::uint32_t, std::uint32_t> tail;  // stream -> its open freeing op
    for (std::uint32_t b = 0; b < free_op_.size(); ++b) {
      if (free_op_[b] != kNone || alloc_op_[b] == kNone) continue;
      const std::uint32_t owner_stream = ops_[alloc_op_[b]].stream;
      auto it = tail.find(owner_stream);
      if (it == tail.end() || ops_[it->second].work.free_count == std::size(Work{}.frees)) {
        Work w;
        w.rank = ops_[alloc_op_[b]].work.rank;
        std::uint32_t op = new_op(owner_stream, w, "free");
        it = tail.insert_or_assign(owner_stream, op).first;
      }
      add_free(it->second, b);
    }
  }

  // Kahn's algorithm over (stream order + dependencies): the host order.
  void order() {
    const auto n = static_cast<std::uint32_t>(ops_.size());
    std::vector<std::uint32_t> indegree(n, 0), next_on_stream(n, kNone), last(s_.rank_count() * kStreamsPerRank, kNone);
    std::vector<std::vector<std::uint32_t>> dependents(n);
    for (std::uint32_t i = 0; i < n; ++i) {
      std::uint32_t& prev = last[ops_[i].stream];
      if (prev != kNone) {
        next_on_stream[prev] = i;
        ++indegree[i];
      }
      prev = i;
      for (std::uint32_t d : ops_[i].deps) {
        dependents[d].push_back(i);
        ++indegree[i];
      }
    }
    std::deque<std::uint32_t> ready;
    for (std::uint32_t i = 0; i < n; ++i)
      if (indegree[i] == 0) ready.push_back(i);
    order_.reserve(n);
    while (!ready.empty()) {
      std::uint32_t i = ready.front();
      ready.pop_front();
      order_.push_back(i);
      auto release = [&](std::uint32_t j) {
        if (--indegree[j] == 0) ready.push_back(j);
      };
      if (next_on_stream[i] != kNone) release(next_on_stream[i]);
      for (std::uint32_t j : dependents[i]) release(j);
    }
    if (order_.size() == n) return;
    // A cycle: name the first launch of each stream that could not be ordered.
    std::vector<bool> placed(n, false);
    for (std::uint32_t i : order_) placed[i] = true;
    std::vector<bool> named(s_.rank_count() * kStreamsPerRank, false);
    std::string msg = "the schedule deadlocks: these launches wait for each other";
    for (std::uint32_t i = 0; i < n; ++i) {
      if (placed[i] || named[ops_[i].stream]) continue;
      named[ops_[i].stream] = true;
      msg += "\n  " + describe(i);
    }
    throw PlanError(msg);
  }

  void finish_device_plan() {
    const auto n = static_cast<std::uint32_t>(ops_.size());
    std::vector<std::uint32_t> position(n);
    for (std::uint32_t p = 0; p < n; ++p) position[order_[p]] = p;
    // An op records an event only when a launch on another stream waits for it.
    std::vector<std::uint32_t> event(n, kNoEvent);
    DevicePlan& dev = plan_.device;
    for (std::uint32_t p = 0; p < n; ++p) {
      const Op& op = ops_[order_[p]];
      HostOp h;
      h.stream = op.stream;
      h.work = op.work;
      h.wait_begin = static_cast<std::uint32_t>(plan_.waits.size());
      for (std::uint32_t d : op.deps) {
        if (ops_[d].stream == op.stream) continue;  // stream order already covers it
        if (event[d] == kNoEvent) {
          event[d] = dev.event_count++;
          dev.event_stream.push_back(ops_[d].stream);
          plan_.ops[position[d]].record = event[d];
        }
        if (std::find(plan_.waits.begin() + h.wait_begin, plan_.waits.end(), event[d]) == plan_.waits.end())
          plan_.waits.push_back(event[d]);
      }
      h.wait_end = static_cast<std::uint32_t>(plan_.waits.size());
      h.work.label = p;
      dev.labels.push_back(op.label);
      dev.span_stream.push_back(op.stream);
      plan_.ops.push_back(h);
    }
    dev.span_count = n;
    for (auto& e : plan_.entries) e = {position[e.first], position[e.last]};
    // Buffer indices stay; only ops moved.
    dev.workload = opt_.workload;
    dev.shape = opt_.shape;
    dev.device_of_rank = opt_.device_of_rank;
    dev.device_of_rank.resize(s_.rank_count(), dev.device_of_rank.empty() ? 0 : dev.device_of_rank.back());
    dev.rank_of_stage.resize(stages_);
    for (std::uint32_t st = 0; st < stages_; ++st) dev.rank_of_stage[st] = rank_of(st, 0);
  }

  const Schedule& s_;
  const std::vector<std::uint32_t>& placement_;
  const PlanOptions& opt_;
  std::uint32_t stages_, microbatches_;
  bool explicit_comms_ = false;
  std::vector<Op> ops_;
  std::vector<PendingDep> pending_;
  KeyValues published_;  // ops by what they produce; stash buffers under kStash
  KeyValues entry_of_;   // SEND and RECV entries, for the trace's arrows
  std::vector<std::uint32_t> alloc_op_, free_op_;
  std::vector<std::uint32_t> order_;
  RunPlan plan_;
};

}  // namespace

RunPlan build_run_plan(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank, const PlanOptions& opt) {
  return PlanBuilder(s, stage_to_rank, opt).build();
}

std::string check_host_order(const RunPlan& plan) {
  const DevicePlan& dev = plan.device;
  std::vector<std::uint32_t> recorded_at(dev.event_count, kNone);
  std::vector<std::uint32_t> alloc_at(dev.buffers.size(), kNone), free_at(dev.buffers.size(), kNone);
  auto name = [&](std::uint32_t p) {
    return "launch " + std::to_string(p) + " ('" + dev.labels[plan.ops[p].work.label] + "')";
  };
  for (std::uint32_t p = 0; p < plan.ops.size(); ++p) {
    const HostOp& op = plan.ops[p];
    for (std::uint32_t w = op.wait_begin; w < op.wait_end; ++w) {
      const std::uint32_t e = plan.waits[w];
      if (e >= dev.event_count || recorded_at[e] == kNone)
        return name(p) + " waits on event " + std::to_string(e) + " before any launch records it";
    }
    const Work& work = op.work;
    auto uses = [&](std::uint32_t b) -> std::string {
      if (b == kNoBuffer) return {};
      if (b >= dev.buffers.size()) return name(p) + " uses buffer " + std::to_string(b) + ", which does not exist";
      if (free_at[b] != kNone)
        return name(p) + " uses buffer " + std::to_string(b) + " after " + name(free_at[b]) + " freed it";
      return {};
    };
    for (std::uint8_t i = 0; i < work.alloc_count; ++i) {
      const std::uint32_t b = work.allocs[i];
      if (alloc_at[b] != kNone) return name(p) + " allocates buffer " + std::to_string(b) + " a second time";
      alloc_at[b] = p;
    }
    for (std::uint32_t b : {work.stash, work.input, work.output}) {
      if (auto m = uses(b); !m.empty()) return m;
      if (b != kNoBuffer && alloc_at[b] == kNone)
        return name(p) + " uses buffer " + std::to_string(b) + " before it is allocated";
    }
    for (std::uint8_t i = 0; i < work.free_count; ++i) {
      const std::uint32_t b = work.frees[i];
      if (alloc_at[b] == kNone) return name(p) + " frees buffer " + std::to_string(b) + ", never allocated";
      if (free_at[b] != kNone) return name(p) + " frees buffer " + std::to_string(b) + " a second time";
      const HostOp& owner = plan.ops[alloc_at[b]];
      if (owner.stream != op.stream) {
        // Freed on another stream: only safe after waiting for the allocating launch.
        bool waits = owner.record != kNoEvent &&
                     std::find(plan.waits.begin() + op.wait_begin, plan.waits.begin() + op.wait_end, owner.record) !=
                         plan.waits.begin() + op.wait_end;
        if (!waits)
          return name(p) + " frees buffer " + std::to_string(b) + " on another stream than " + name(alloc_at[b]) +
                 " without waiting for it";
      }
      free_at[b] = p;
    }
    if (op.record != kNoEvent) {
      if (op.record >= dev.event_count)
        return name(p) + " records event " + std::to_string(op.record) + ", which does not exist";
      if (recorded_at[op.record] != kNone)
        return name(p) + " records event " + std::to_string(op.record) + " a second time";
      if (dev.event_stream[op.record] != op.stream) return name(p) + " records an event on another stream than planned";
      recorded_at[op.record] = p;
    }
  }
  for (std::uint32_t b = 0; b < dev.buffers.size(); ++b)
    if (alloc_at[b] != kNone && free_at[b] == kNone) return "buffer " + std::to_string(b) + " is never freed";
  return {};
}

std::vector<std::uint64_t> planned_peak_bytes(const RunPlan& plan) {
  const std::size_t ranks = plan.device.device_of_rank.size();
  std::vector<std::uint64_t> live(ranks, 0), peak(ranks, 0);
  for (const HostOp& op : plan.ops) {
    for (std::uint8_t i = 0; i < op.work.alloc_count; ++i) {
      const BufferSpec& b = plan.device.buffers[op.work.allocs[i]];
      live[b.rank] += b.bytes;
      peak[b.rank] = std::max(peak[b.rank], live[b.rank]);
    }
    for (std::uint8_t i = 0; i < op.work.free_count; ++i) {
      const BufferSpec& b = plan.device.buffers[op.work.frees[i]];
      live[b.rank] -= b.bytes;
    }
  }
  return peak;
}

}  // namespace ppsched::run
