#include "run/engine.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include <fmt/format.h>

#include "ir/action_text.hpp"

namespace ppsched::run {

namespace {

// `runs_on` maps each planned stream to the one it runs on (empty: each on its own).
void enqueue(Device& device, const RunPlan& plan, const std::vector<std::uint32_t>& runs_on = {}) {
  device.begin_iteration();
  for (std::uint32_t p = 0; p < plan.ops.size(); ++p) {
    const HostOp& op = plan.ops[p];
    const std::uint32_t stream = runs_on.empty() ? op.stream : runs_on[op.stream];
    for (std::uint32_t w = op.wait_begin; w < op.wait_end; ++w) device.wait(stream, plan.waits[w]);
    device.launch(stream, op.work, p);
    if (op.record != kNoEvent) device.record(stream, op.record);
  }
}

bool timed_kind(ActionKind k) {
  return is_compute(k) || k == ActionKind::Unshard || k == ActionKind::Reshard || k == ActionKind::ReduceGrad ||
         k == ActionKind::RecvF || k == ActionKind::RecvB;
}

// Per (stage, kind), the spans of `plan` that a cost table prices (markers and SEND completions
// are left out); `buckets` owns the sample lists.
using Buckets = std::map<std::pair<std::uint32_t, ActionKind>, std::vector<double>>;
std::vector<std::vector<double>*> bucket_spans(const RunPlan& plan, Buckets& buckets) {
  std::vector<std::vector<double>*> bucket_of(plan.ops.size(), nullptr);
  for (std::uint32_t p = 0; p < plan.ops.size(); ++p) {
    const Work& w = plan.ops[p].work;
    if (timed_kind(w.action) && (w.kind != WorkKind::None || !is_send_recv(w.action)))
      bucket_of[p] = &buckets[{w.stage, w.action}];
  }
  return bucket_of;
}

std::vector<KindTiming> kind_timings(const Buckets& buckets) {
  std::vector<KindTiming> kinds;
  for (const auto& [k, samples] : buckets) kinds.push_back({k.first, k.second, summarize(samples)});
  return kinds;
}

}  // namespace

double steady_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

Measurement measure(Device& device, const RunPlan& plan, const MeasureOptions& opt) {
  auto now = opt.wall_clock ? opt.wall_clock : steady_seconds;
  // A single process stops where it sees Ctrl-C; processes of one run stop together, where
  // process 0 says (IterationSync::agree), so their collectives stay matched.
  auto interrupted = [&] { return opt.interrupted && opt.interrupted->load(); };
  auto stop_here = [&] { return !opt.sync && interrupted(); };
  const std::size_t spans = plan.ops.size();
  std::vector<double> start(spans), end(spans);
  double enqueue_s = 0;  // host time spent enqueueing
  auto iteration = [&] {
    if (opt.sync) opt.sync->before_iteration();
    const double enqueued = now();
    enqueue(device, plan);
    enqueue_s += now() - enqueued;
    const double t = device.end_iteration(start, end);
    return opt.sync ? opt.sync->iteration_us(t) : t;
  };
  Measurement m;
  for (; m.warmup < opt.warmup && !stop_here(); ++m.warmup) iteration();
  // Per (stage, kind) bucket, the durations of every timed launch.
  Buckets buckets;
  const std::vector<std::vector<double>*> bucket_of = bucket_spans(plan, buckets);
  Stopper stopper(opt.rule);
  enqueue_s = 0;
  const double waited_before = device.host_wait_s();
  const double began = now();
  while (true) {
    if (stop_here()) {
      m.stop = StopReason::Interrupted;
      break;
    }
    const double t = iteration();
    m.iteration_us.push_back(t);
    stopper.add(t);
    for (std::uint32_t p = 0; p < spans; ++p)
      if (bucket_of[p]) bucket_of[p]->push_back(end[p] - start[p]);
    m.stop = stopper.check(now() - began);
    if (opt.sync) m.stop = opt.sync->agree(interrupted() ? StopReason::Interrupted : m.stop);
    if (m.stop != StopReason::NotYet) break;
  }
  m.wall_s = now() - began;
  if (const std::size_t launches = spans * m.iteration_us.size(); launches > 0)
    m.host_us_per_launch = std::max(0.0, enqueue_s - (device.host_wait_s() - waited_before)) * 1e6 / launches;
  m.iteration = summarize(m.iteration_us);
  m.kinds = kind_timings(buckets);
  m.last_start_us = std::move(start);
  m.last_end_us = std::move(end);
  m.memory = device.memory_use();
  return m;
}

std::vector<KindTiming> measure_isolated(Device& device, const RunPlan& plan, std::size_t iterations) {
  // Every stream of a device onto the compute stream of the device's first rank. The host order
  // is topological, so one stream in that order honours every dependency by itself; the waits
  // stay, and order the devices among themselves.
  const std::vector<int>& device_of_rank = plan.device.device_of_rank;
  std::vector<std::uint32_t> first_rank(device_of_rank.size(), kNoEntry);
  std::vector<std::uint32_t> runs_on(plan.device.stream_count());
  for (std::uint32_t stream = 0; stream < runs_on.size(); ++stream) {
    const auto d = static_cast<std::size_t>(device_of_rank.at(rank_of_stream(stream)));
    if (d >= first_rank.size()) first_rank.resize(d + 1, kNoEntry);
    if (first_rank[d] == kNoEntry) first_rank[d] = rank_of_stream(stream);
    runs_on[stream] = stream_of(first_rank[d]);
  }
  Buckets buckets;
  const std::vector<std::vector<double>*> bucket_of = bucket_spans(plan, buckets);
  std::vector<double> start(plan.ops.size()), end(plan.ops.size());
  for (std::size_t i = 0; i < iterations; ++i) {
    enqueue(device, plan, runs_on);
    device.end_iteration(start, end);
    if (i == 0) continue;  // the first one warms the changed stream order up
    for (std::uint32_t p = 0; p < plan.ops.size(); ++p)
      if (bucket_of[p]) bucket_of[p]->push_back(end[p] - start[p]);
  }
  return kind_timings(buckets);
}

std::string check_measured_order(const RunPlan& plan, const Measurement& m, double tolerance_us) {
  const std::size_t n = plan.ops.size();
  if (m.last_start_us.size() != n || m.last_end_us.size() != n) return {};
  std::vector<std::uint32_t> recorder(plan.device.event_count, kNoEntry);
  std::vector<std::uint32_t> previous(plan.device.stream_count(), kNoEntry);
  const auto& dev = plan.device;
  auto device_of = [&](std::uint32_t p) { return dev.device_of_rank.at(rank_of_stream(plan.ops[p].stream)); };
  auto late = [&](std::uint32_t p, std::uint32_t before, const char* why) -> std::string {
    if (m.last_start_us[p] + tolerance_us >= m.last_end_us[before]) return {};
    return fmt::format("the device started '{}' at {:.3f} us, before '{}' ({}) ended at {:.3f} us",
                       dev.labels[plan.ops[p].work.label], m.last_start_us[p], dev.labels[plan.ops[before].work.label],
                       why, m.last_end_us[before]);
  };
  // Who records each event, wherever it sits in the host order: a wait enqueued before its
  // record is exactly the race this looks for.
  for (std::uint32_t p = 0; p < n; ++p)
    if (plan.ops[p].record != kNoEvent) recorder.at(plan.ops[p].record) = p;
  for (std::uint32_t p = 0; p < n; ++p) {
    const HostOp& op = plan.ops[p];
    if (previous[op.stream] != kNoEntry)
      if (auto msg = late(p, previous[op.stream], "the launch before it on its stream"); !msg.empty()) return msg;
    for (std::uint32_t w = op.wait_begin; w < op.wait_end; ++w) {
      const std::uint32_t r = recorder.at(plan.waits[w]);
      if (r != kNoEntry && device_of(r) == device_of(p))
        if (auto msg = late(p, r, "which it waits for"); !msg.empty()) return msg;
    }
    previous[op.stream] = p;
  }
  return {};
}

std::vector<CostRow> measured_costs(const std::vector<KindTiming>& kinds) {
  std::vector<CostRow> rows;
  for (const KindTiming& k : kinds) {
    if (is_send_recv(k.kind)) continue;  // transfers come from the topology, not the cost table
    rows.push_back({k.stage, k.kind, k.stats.median});
  }
  return rows;
}

Timeline measured_timeline(const RunPlan& plan, const Measurement& m) {
  Timeline t;
  t.rank_begin = plan.rank_begin;
  const std::size_t n = plan.entries.size();
  t.start.resize(n);
  t.end.resize(n);
  t.stream.resize(n);
  t.step = plan.entry_step;
  t.released_by.assign(n, Timeline::kNone);
  t.peer = plan.entry_peer;
  for (std::size_t e = 0; e < n; ++e) {
    const EntrySpans& sp = plan.entries[e];
    t.start[e] = m.last_start_us.empty() ? 0.0 : m.last_start_us[sp.first];
    t.end[e] = m.last_end_us.empty() ? 0.0 : m.last_end_us[sp.last];
    // The tracks simulate shows: sends and receives apart, though they share one comm stream.
    const HostOp& op = plan.ops[sp.first];
    const ActionKind k = op.work.action;
    t.stream[e] = is_compute_stream(op.stream)                       ? Stream::Compute
                  : k == ActionKind::SendF || k == ActionKind::SendB ? Stream::Send
                                                                     : Stream::Recv;
    t.makespan = std::max(t.makespan, t.end[e]);
  }
  return t;
}

}  // namespace ppsched::run
