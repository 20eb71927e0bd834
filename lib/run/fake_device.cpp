#include "run/fake_device.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <string>

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

// The fake needs no communicator of its own: its transfers use the launcher's group.
Bytes FakeRuntime::new_comm_id() { return Bytes{'f', 'a', 'k', 'e'}; }

std::unique_ptr<Device> FakeRuntime::open_member(const Discovery& discovery, const GroupMembership& member) {
  if (discovery.status != Discovery::Status::Ok) throw DeviceError("open: no fake devices were discovered");
  if (!member.group) throw DeviceError("open: a multi-process fake device needs the process group");
  return std::make_unique<FakeDevice>(opt_, member);
}

// Over the launcher's transport, as NCCL's sendrecv test does over its own: real bytes, real time.
double FakeDevice::ping_pong_us(int peer, std::uint64_t bytes, int repeats) {
  ProcessGroup* g = member_.group;
  if (!g) throw DeviceError("ping_pong_us needs a multi-process run");
  Bytes buffer(bytes, 0x5a);
  const bool first = g->rank() < peer;
  std::vector<double> round_trips;
  try {
    for (int i = 0; i < repeats + 2; ++i) {  // two warm-ups
      const auto began = std::chrono::steady_clock::now();
      if (first) {
        g->send(peer, kFakeDataTag, buffer);
        g->recv(peer, kFakeDataTag, buffer, member_.timeout_s);
      } else {
        g->recv(peer, kFakeDataTag, buffer, member_.timeout_s);
        g->send(peer, kFakeDataTag, buffer);
      }
      const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - began;
      if (i >= 2) round_trips.push_back(took.count());
    }
  } catch (const GroupError& e) {
    throw DeviceError(std::string("ping-pong with process ") + std::to_string(peer) + ": " + e.what());
  }
  if (round_trips.empty()) return 0;
  std::nth_element(round_trips.begin(), round_trips.begin() + round_trips.size() / 2, round_trips.end());
  return round_trips[round_trips.size() / 2] / 2;
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
      if (rank < plan.device_of_rank.size() && plan.here(rank))
        memory_.fixed_bytes.at(plan.device_of_rank[rank]) += plan.shape.weight_bytes();
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

// By the launch's label, its index in the whole schedule's plan: a process of a multi-process
// run draws the same jitter for it as a single process running every rank.
double FakeDevice::factor(std::uint32_t label) const {
  if (opt_.jitter <= 0) return 1.0;
  const std::uint64_t h = mix(opt_.seed ^ mix(iteration_ * 0x100000001B3ull + label));
  const double u = static_cast<double>(h >> 11) * 0x1.0p-53;  // [0, 1)
  return 1.0 + opt_.jitter * (2 * u - 1);
}

void FakeDevice::launch(std::uint32_t stream, const Work& work, std::uint32_t span) {
  double begin = clock_.at(stream);
  const double duration = std::max(0.0, work.expected_us) * factor(work.label);
  if (work.kind == WorkKind::Send) send(work, begin);
  if (work.kind == WorkKind::SendDone) begin = std::max(begin, finish_send(work));
  if (work.kind == WorkKind::Recv) begin = receive(work, begin, duration);
  const double finish = begin + duration;
  auto device_of = [&](std::uint32_t b) { return plan_.device_of_rank.at(plan_.buffers.at(b).rank); };
  for (std::uint8_t i = 0; i < work.alloc_count; ++i)
    mem_.push_back({begin, static_cast<std::int64_t>(plan_.buffers[work.allocs[i]].bytes), device_of(work.allocs[i])});
  for (std::uint8_t i = 0; i < work.free_count; ++i)
    mem_.push_back({finish, -static_cast<std::int64_t>(plan_.buffers[work.frees[i]].bytes), device_of(work.frees[i])});
  start_.at(span) = begin;
  end_.at(span) = finish;
  clock_[stream] = finish;
}

namespace {

// What a Send tells its Recv besides the bytes: when it was posted, and which transfer it is.
struct TransferHeader {
  double posted_us;
  std::uint64_t iteration;
  std::uint32_t stage, microbatch;
  std::uint32_t kind;  // ActionKind of the SEND
};

std::uint8_t pattern(const TransferHeader& h) {
  return static_cast<std::uint8_t>(h.stage * 31 + h.microbatch * 7 + h.iteration * 3 + 1);
}

std::string transfer_text(std::uint32_t kind, std::uint32_t stage, std::uint32_t mb) {
  return std::string(kind == static_cast<std::uint32_t>(ActionKind::SendF) ? "SEND_F" : "SEND_B") + " of stage " +
         std::to_string(stage) + ", microbatch " + std::to_string(mb);
}

}  // namespace

void FakeDevice::send(const Work& work, double posted) {
  const TransferHeader h{posted, iteration_, work.stage, work.microbatch, static_cast<std::uint32_t>(work.action)};
  message_.assign(sizeof h + work.copy_bytes, pattern(h));
  std::memcpy(message_.data(), &h, sizeof h);
  try {
    member_.group->send(process_of(work.peer), kFakeDataTag, message_);
  } catch (const GroupError& e) {
    throw DeviceError("rank " + std::to_string(work.rank) + " ('" + plan_.labels.at(work.label) + "'): " + e.what());
  }
}

void FakeDevice::await(std::uint32_t rank, int tag, std::span<std::uint8_t> into) {
  const auto began = std::chrono::steady_clock::now();
  try {
    member_.group->recv(process_of(rank), tag, into, member_.timeout_s);
  } catch (...) {
    waited_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    throw;
  }
  waited_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
}

double FakeDevice::finish_send(const Work& work) {
  double ended = 0;
  std::span<std::uint8_t> into(reinterpret_cast<std::uint8_t*>(&ended), sizeof ended);
  try {
    await(work.peer, kFakeAckTag, into);
  } catch (const GroupError& e) {
    throw DeviceError("rank " + std::to_string(work.rank) + " ('" + plan_.labels.at(work.label) +
                      "') waited for rank " + std::to_string(work.peer) + " to receive it: " + e.what());
  }
  return ended;
}

double FakeDevice::receive(const Work& work, double ready, double duration) {
  TransferHeader h{};
  message_.resize(sizeof h + work.copy_bytes);
  const std::string who = "rank " + std::to_string(work.rank) + " ('" + plan_.labels.at(work.label) + "')";
  try {
    await(work.peer, kFakeDataTag, message_);
  } catch (const GroupError& e) {
    throw DeviceError(who + " waited for rank " + std::to_string(work.peer) + "'s send: " + e.what());
  }
  std::memcpy(&h, message_.data(), sizeof h);
  // The Recv of stage s is matched with the SEND of its neighbour stage: s - 1 forward, s + 1 back.
  const bool forward = work.action == ActionKind::RecvF;
  const auto want_kind = static_cast<std::uint32_t>(forward ? ActionKind::SendF : ActionKind::SendB);
  const std::uint32_t want_stage = forward ? work.stage - 1 : work.stage + 1;
  if (h.kind != want_kind || h.stage != want_stage || h.microbatch != work.microbatch || h.iteration != iteration_)
    throw DeviceError(
        who + " expected rank " + std::to_string(work.peer) + "'s " +
        transfer_text(want_kind, want_stage, work.microbatch) + ", but its next transfer to rank " +
        std::to_string(work.rank) + " is " + transfer_text(h.kind, h.stage, h.microbatch) +
        ": the two ranks order their transfers differently (NCCL would hand over the wrong bytes or hang)");
  if (work.copy_bytes > 0 && (message_[sizeof h] != pattern(h) || message_.back() != pattern(h)))
    throw DeviceError(who + " received bytes that are not the ones rank " + std::to_string(work.peer) + " sent");
  const double begin = std::max(ready, h.posted_us);
  const double ended = begin + duration;
  const auto* p = reinterpret_cast<const std::uint8_t*>(&ended);
  try {
    member_.group->send(process_of(work.peer), kFakeAckTag, std::span<const std::uint8_t>(p, sizeof ended));
  } catch (const GroupError& e) {
    throw DeviceError(who + ": " + e.what());
  }
  return begin;
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
    memory_.peak_buffer_bytes[e.device] = std::max<std::uint64_t>(
        memory_.peak_buffer_bytes[e.device], static_cast<std::uint64_t>(std::max<std::int64_t>(l, 0)));
  }
  double latest = 0;
  for (double e : end_) latest = std::max(latest, e);
  return latest;
}

}  // namespace ppsched::run
