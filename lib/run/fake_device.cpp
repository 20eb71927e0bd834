#include "run/fake_device.hpp"

#include <algorithm>
#include <limits>

namespace ppsched::run {

namespace {

// splitmix64: a tiny, well-mixed hash, so jitter is reproducible without any global state.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

Discovery FakeRuntime::discover() {
  ++discover_calls_;
  Discovery d;
  d.status = opt_.devices > 0 ? Discovery::Status::Ok : Discovery::Status::NoDevice;
  d.backend = "fake";
  d.driver_version = d.runtime_version = "none";
  if (opt_.devices <= 0) d.message = "the fake backend was given no devices";
  for (int i = 0; i < opt_.devices; ++i)
    d.devices.push_back({i, "fake device " + std::to_string(i) + " (replays the cost table)", 0, 0});
  return d;
}

std::unique_ptr<Device> FakeRuntime::open(const Discovery& discovery) {
  if (discovery.status != Discovery::Status::Ok) throw DeviceError("open: no fake devices were discovered");
  return std::make_unique<FakeDevice>(opt_);
}

Bytes FakeRuntime::new_comm_id() { throw DeviceError("the fake backend has no multi-process mode yet"); }

std::unique_ptr<Device> FakeRuntime::open_member(const Discovery&, const GroupMembership&) {
  throw DeviceError("the fake backend has no multi-process mode yet");
}

double FakeDevice::ping_pong_us(int, std::uint64_t, int) {
  throw DeviceError("the fake backend has no multi-process mode yet");
}

void FakeDevice::setup(const DevicePlan& plan) {
  plan_ = plan;
  clock_.assign(plan.stream_count(), 0.0);
  event_time_.assign(plan.event_count, 0.0);
  event_iteration_.assign(plan.event_count, 0);
  start_.assign(plan.span_count, 0.0);
  end_.assign(plan.span_count, 0.0);
  const int devices = opt_.devices > 0 ? opt_.devices : 1;
  memory_.peak_buffer_bytes.assign(devices, 0);
  memory_.fixed_bytes.assign(devices, 0);
  if (plan.workload == Workload::Gemm)
    for (std::uint32_t rank : plan.rank_of_stage)
      if (rank < plan.device_of_rank.size()) memory_.fixed_bytes[plan.device_of_rank[rank]] += plan.shape.weight_bytes();
}

void FakeDevice::begin_iteration() {
  ++iteration_;  // events of earlier iterations count as never recorded in this one
  std::fill(clock_.begin(), clock_.end(), 0.0);
  mem_.clear();
}

void FakeDevice::wait(std::uint32_t stream, std::uint32_t event) {
  if (event_iteration_.at(event) != iteration_) {
    ++unrecorded_waits_;  // CUDA ignores it; so do we, and the launch races ahead
    return;
  }
  clock_.at(stream) = std::max(clock_[stream], event_time_[event]);
}

void FakeDevice::record(std::uint32_t stream, std::uint32_t event) {
  event_time_.at(event) = clock_.at(stream);
  event_iteration_[event] = iteration_;
}

void FakeDevice::launch(std::uint32_t stream, const Work& work, std::uint32_t span) {
  double factor = 1.0;
  if (opt_.jitter > 0) {
    const std::uint64_t h = mix(opt_.seed ^ mix(iteration_ * 0x100000001B3ull + span));
    const double u = static_cast<double>(h >> 11) * 0x1.0p-53;  // [0, 1)
    factor += opt_.jitter * (2 * u - 1);
  }
  const double begin = clock_.at(stream);
  const double finish = begin + std::max(0.0, work.expected_us) * factor;
  auto device_of = [&](std::uint32_t b) { return plan_.device_of_rank.at(plan_.buffers.at(b).rank); };
  for (std::uint8_t i = 0; i < work.alloc_count; ++i)
    mem_.push_back({begin, static_cast<std::int64_t>(plan_.buffers[work.allocs[i]].bytes), device_of(work.allocs[i])});
  for (std::uint8_t i = 0; i < work.free_count; ++i)
    mem_.push_back({finish, -static_cast<std::int64_t>(plan_.buffers[work.frees[i]].bytes), device_of(work.frees[i])});
  start_.at(span) = begin;
  end_.at(span) = finish;
  clock_[stream] = finish;
}

double FakeDevice::end_iteration(std::span<double> span_start_us, std::span<double> span_end_us) {
  std::copy(start_.begin(), start_.end(), span_start_us.begin());
  std::copy(end_.begin(), end_.end(), span_end_us.begin());
  // Peak memory in device time: frees before allocations at the same instant, as a pool reuses.
  std::sort(mem_.begin(), mem_.end(), [](const MemEvent& a, const MemEvent& b) {
    return a.time != b.time ? a.time < b.time : a.delta < b.delta;
  });
  std::vector<std::int64_t> live(memory_.peak_buffer_bytes.size(), 0);
  std::fill(memory_.peak_buffer_bytes.begin(), memory_.peak_buffer_bytes.end(), 0);
  for (const MemEvent& e : mem_) {
    auto& l = live.at(e.device);
    l += e.delta;
    memory_.peak_buffer_bytes[e.device] = std::max<std::uint64_t>(memory_.peak_buffer_bytes[e.device], static_cast<std::uint64_t>(std::max<std::int64_t>(l, 0)));
  }
  double latest = 0;
  for (double e : end_) latest = std::max(latest, e);
  return latest;
}

}  // namespace ppsched::run
