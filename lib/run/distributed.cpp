#include "run/distributed.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

#include "ir/action_text.hpp"
#include "ir/user_error.hpp"

namespace ppsched::run {

namespace {

std::uint32_t rank_of_op(const HostOp& op) { return rank_of_stream(op.stream); }

// Plain values in and out of a byte string, in this machine's layout: every process of a run is
// the same binary (run_distributed's callers check it), so no portable encoding is needed.
class Writer {
 public:
  template <typename T>
  void put(const T& v) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
    out_.insert(out_.end(), p, p + sizeof v);
  }
  void put_text(const std::string& s) {
    put(static_cast<std::uint32_t>(s.size()));
    out_.insert(out_.end(), s.begin(), s.end());
  }
  Bytes take() { return std::move(out_); }

 private:
  Bytes out_;
};

class Reader {
 public:
  explicit Reader(const Bytes& in) : in_(in) {}
  template <typename T>
  T get() {
    T v{};
    need(sizeof v);
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string get_text() {
    const auto n = get<std::uint32_t>();
    need(n);
    std::string s(in_.begin() + static_cast<std::ptrdiff_t>(at_), in_.begin() + static_cast<std::ptrdiff_t>(at_ + n));
    at_ += n;
    return s;
  }

 private:
  void need(std::size_t n) const {
    if (at_ + n > in_.size()) throw std::runtime_error("a process's measurement is cut short");
  }
  const Bytes& in_;
  std::size_t at_ = 0;
};

void put_stats(Writer& w, const SampleStats& s) {
  w.put(static_cast<std::uint64_t>(s.count));
  for (double v : {s.median, s.min, s.max, s.mean, s.p99, s.stdev, s.cv_pct}) w.put(v);
}

SampleStats get_stats(Reader& r) {
  SampleStats s;
  s.count = r.get<std::uint64_t>();
  for (double* v : {&s.median, &s.min, &s.max, &s.mean, &s.p99, &s.stdev, &s.cv_pct}) *v = r.get<double>();
  return s;
}

// Which launch of the plan belongs to which schedule entry (a SEND has two).
std::vector<std::uint32_t> entry_of_launch(const RunPlan& plan) {
  std::vector<std::uint32_t> entry(plan.ops.size(), kNoEntry);
  for (std::uint32_t e = 0; e < plan.entries.size(); ++e) {
    entry[plan.entries[e].first] = e;
    entry[plan.entries[e].last] = e;
  }
  return entry;
}

}  // namespace

std::vector<std::int32_t> place_ranks(std::uint32_t ranks, int processes, const std::vector<int>& map) {
  std::vector<std::int32_t> out(ranks);
  if (map.empty()) {
    if (static_cast<std::uint32_t>(processes) != ranks)
      throw UserError("the schedule has " + std::to_string(ranks) + " rank" + (ranks == 1 ? "" : "s") +
                      " but the launcher started " + std::to_string(processes) + " process" +
                      (processes == 1 ? "" : "es") +
                      ": start one process per rank, or place ranks "
                      "with --rank-map");
    for (std::uint32_t r = 0; r < ranks; ++r) out[r] = static_cast<std::int32_t>(r);
    return out;
  }
  if (map.size() != ranks)
    throw UserError("--rank-map lists " + std::to_string(map.size()) + " process" + (map.size() == 1 ? "" : "es") +
                    ", but the schedule has " + std::to_string(ranks) + " ranks: give one process per rank");
  std::vector<int> holder(static_cast<std::size_t>(std::max(processes, 0)), -1);
  for (std::uint32_t r = 0; r < ranks; ++r) {
    const int p = map[r];
    if (p < 0 || p >= processes)
      throw UserError("--rank-map puts rank " + std::to_string(r) + " on process " + std::to_string(p) +
                      ", but the launcher started processes 0 to " + std::to_string(processes - 1));
    if (holder[p] >= 0)
      throw UserError("--rank-map puts ranks " + std::to_string(holder[p]) + " and " + std::to_string(r) +
                      " on process " + std::to_string(p) + ": a process (one GPU) runs one rank");
    holder[p] = static_cast<int>(r);
    out[r] = p;
  }
  return out;
}

RunPlan localize_plan(const RunPlan& global, int me, const std::vector<std::int32_t>& process_of_rank, int device) {
  auto process_of = [&](std::uint32_t rank) { return process_of_rank.at(rank); };
  const std::vector<std::uint32_t> entry = entry_of_launch(global);
  std::vector<std::uint32_t> recorder(global.device.event_count, kNoEntry);
  for (std::uint32_t p = 0; p < global.ops.size(); ++p)
    if (global.ops[p].record != kNoEvent) recorder[global.ops[p].record] = p;

  RunPlan local;
  local.device = global.device;
  local.device.process_of_rank = process_of_rank;
  local.device.process = me;
  // One device per process.
  std::fill(local.device.device_of_rank.begin(), local.device.device_of_rank.end(), device);
  local.device.span_stream.clear();
  for (std::uint32_t p = 0; p < global.ops.size(); ++p) {
    const HostOp& op = global.ops[p];
    const std::uint32_t rank = rank_of_op(op);
    if (process_of(rank) != me) continue;
    HostOp h = op;
    h.wait_begin = static_cast<std::uint32_t>(local.waits.size());
    for (std::uint32_t w = op.wait_begin; w < op.wait_end; ++w) {
      const std::uint32_t producer = recorder.at(global.waits[w]);
      if (producer != kNoEntry && process_of(rank_of_op(global.ops[producer])) == me)
        local.waits.push_back(global.waits[w]);
    }
    h.wait_end = static_cast<std::uint32_t>(local.waits.size());
    Work& work = h.work;
    const std::uint32_t e = entry[p];
    const bool send = work.action == ActionKind::SendF || work.action == ActionKind::SendB;
    if (work.kind == WorkKind::Copy && process_of(work.copy_from) != me) {
      // An explicit RECV is an entry of its own; the copies of a compute-only schedule are not.
      if (e == kNoEntry)
        throw PlanError("'" + global.device.labels.at(work.label) + "' on rank " + std::to_string(rank) +
                        " takes its input from rank " + std::to_string(work.copy_from) +
                        ", another process, but the schedule has no SEND and RECV for it: lower it with "
                        "--lower send-recv (run's default) to run it across processes");
      work.kind = WorkKind::Recv;
      work.peer = work.copy_from;
    } else if (send && e != kNoEntry && global.entry_peer[e] != kNoEntry) {
      const HostOp& recv = global.ops[global.entries[global.entry_peer[e]].first];
      const std::uint32_t to = rank_of_op(recv);
      if (process_of(to) != me) {
        work.kind = p == global.entries[e].first ? WorkKind::Send : WorkKind::SendDone;
        work.peer = to;
        work.copy_bytes = recv.work.copy_bytes;
      }
    }
    local.device.span_stream.push_back(h.stream);
    local.ops.push_back(h);
  }
  local.device.span_count = static_cast<std::uint32_t>(local.ops.size());
  return local;
}

void GroupSync::before_iteration() {
  if (barrier_) group_.barrier(timeout_s_);
}

double GroupSync::iteration_us(double local_us) { return group_.all_max(local_us, timeout_s_); }

StopReason GroupSync::agree(StopReason local) {
  // Process 0's stop rule decides, but an interrupt on any process stops them all: a SIGTERM to
  // process 3 must not leave the job running to --timeout and reported as complete.
  const bool anyone_interrupted = group_.all_max(local == StopReason::Interrupted ? 1.0 : 0.0, timeout_s_) > 0;
  Bytes decision{static_cast<std::uint8_t>(local)};
  group_.broadcast(decision, 0, timeout_s_);
  if (decision.size() != 1 || decision[0] > static_cast<std::uint8_t>(StopReason::Interrupted))
    throw GroupError("process 0 sent a stop decision that does not parse");
  return anyone_interrupted ? StopReason::Interrupted : static_cast<StopReason>(decision[0]);
}

Bytes pack_measurement(const RunPlan& local, const Measurement& m) {
  Writer w;
  w.put(static_cast<std::uint32_t>(local.ops.size()));
  for (std::uint32_t p = 0; p < local.ops.size(); ++p) {
    w.put(local.ops[p].work.label);
    w.put(p < m.last_start_us.size() ? m.last_start_us[p] : 0.0);
    w.put(p < m.last_end_us.size() ? m.last_end_us[p] : 0.0);
  }
  w.put(static_cast<std::uint32_t>(m.kinds.size()));
  for (const KindTiming& k : m.kinds) {
    w.put(k.stage);
    w.put(static_cast<std::uint8_t>(k.kind));
    put_stats(w, k.stats);
  }
  const std::size_t device = local.device.device_of_rank.empty() ? 0 : local.device.device_of_rank.front();
  auto of_device = [&](const std::vector<std::uint64_t>& v) {
    return device < v.size() ? v[device] : std::uint64_t{0};
  };
  w.put(of_device(m.memory.peak_buffer_bytes));
  w.put(of_device(m.memory.fixed_bytes));
  w.put(m.host_us_per_launch);
  return w.take();
}

Measurement merge_measurements(const RunPlan& global, const Measurement& own, const std::vector<Bytes>& shares) {
  Measurement m;
  m.warmup = own.warmup;
  m.iteration_us = own.iteration_us;
  m.iteration = own.iteration;
  m.stop = own.stop;
  m.wall_s = own.wall_s;
  const std::size_t n = global.ops.size();
  m.last_start_us.assign(n, 0.0);
  m.last_end_us.assign(n, 0.0);
  for (const Bytes& share : shares) {
    Reader r(share);
    const auto launches = r.get<std::uint32_t>();
    for (std::uint32_t i = 0; i < launches; ++i) {
      const auto label = r.get<std::uint32_t>();
      if (label >= n) throw std::runtime_error("a process measured a launch the plan does not have");
      m.last_start_us[label] = r.get<double>();
      m.last_end_us[label] = r.get<double>();
    }
    const auto kinds = r.get<std::uint32_t>();
    for (std::uint32_t i = 0; i < kinds; ++i) {
      KindTiming k;
      k.stage = r.get<std::uint32_t>();
      k.kind = static_cast<ActionKind>(r.get<std::uint8_t>());
      k.stats = get_stats(r);
      m.kinds.push_back(k);
    }
    m.memory.peak_buffer_bytes.push_back(r.get<std::uint64_t>());
    m.memory.fixed_bytes.push_back(r.get<std::uint64_t>());
    m.host_us_per_launch = std::max(m.host_us_per_launch, r.get<double>());
  }
  std::sort(m.kinds.begin(), m.kinds.end(), [](const KindTiming& a, const KindTiming& b) {
    return a.stage != b.stage ? a.stage < b.stage : a.kind < b.kind;
  });
  return m;
}

}  // namespace ppsched::run
