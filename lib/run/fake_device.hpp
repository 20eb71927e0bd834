// A device without a GPU: it replays each launch's expected duration (Work::expected_us, from the
// cost table and comm model) with CUDA's stream and event semantics, including the one that
// makes host order matter: waiting on an event not yet recorded is a no-op, counted here.
//
// It is what tests the engine, the plan and the statistics on CPU-only machines, and what
// `ppsched run --backend fake` uses: a fake run of a schedule measures exactly what the timed
// simulator predicts, up to the jitter it is given.
//
// In a multi-process run (open_member) each process replays its own rank, and a transfer moves
// its real bytes over the ProcessGroup with NCCL's rendezvous semantics, in device time: the Send
// carries the time it was posted with the bytes; the Recv starts at the later of that and its
// own stream's time, and answers with the time the transfer ends, which is when the sender's
// SendDone ends. So a fake multi-process run times exactly what the single-process one does,
// and a process blocks exactly where its GPU stream would.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

#include "run/device.hpp"

namespace ppsched::run {

struct FakeOptions {
  int devices = 1;
  /// Each launch takes expected_us * (1 + u), u uniform in [-jitter, +jitter], deterministic in
  /// (seed, iteration, span).
  double jitter = 0;
  std::uint64_t seed = 1;
};

/// The messages of the fake transfers: tags on the ProcessGroup.
inline constexpr int kFakeDataTag = 1;  ///< sender -> receiver: the header and the bytes
inline constexpr int kFakeAckTag = 2;   ///< receiver -> sender: when the transfer ended

class FakeRuntime : public DeviceRuntime {
 public:
  /// `opt.devices` devices for a single process; a member of a multi-process run has one.
  explicit FakeRuntime(FakeOptions opt = {}) : opt_(opt) {}
  Discovery discover() override;
  std::unique_ptr<Device> open(const Discovery& discovery) override;
  Bytes new_comm_id() override;
  std::unique_ptr<Device> open_member(const Discovery& discovery, const GroupMembership& member) override;
  /// How many times discover() ran: the command must call it exactly once.
  int discover_calls() const { return discover_calls_; }

 private:
  FakeOptions opt_;
  int discover_calls_ = 0;
};

/// The fake device itself, for tests that look inside it.
class FakeDevice : public Device {
 public:
  explicit FakeDevice(FakeOptions opt) : opt_(opt) {}
  /// A member of a multi-process run: one device, transfers over `member.group`.
  FakeDevice(FakeOptions opt, const GroupMembership& member) : opt_(opt), member_(member) {
    opt_.devices = std::max(opt_.devices, member.device + 1);
  }
  void setup(const DevicePlan& plan) override;
  void begin_iteration() override;
  void wait(std::uint32_t stream, std::uint32_t event) override;
  void record(std::uint32_t stream, std::uint32_t event) override;
  void launch(std::uint32_t stream, const Work& work, std::uint32_t span) override;
  double end_iteration(std::span<double> span_start_us, std::span<double> span_end_us) override;
  MemoryUse memory_use() const override { return memory_; }
  double ping_pong_us(int peer, std::uint64_t bytes, int repeats) override;
  double host_wait_s() const override { return waited_s_; }
  /// Waits on events not recorded in the current iteration: a race on a real GPU.
  std::uint64_t unrecorded_waits() const { return unrecorded_waits_; }

 private:
  struct MemEvent {
    double time;
    std::int64_t delta;
    int device;
  };
  double factor(std::uint32_t label) const;
  void send(const Work& work, double posted);
  /// When the receiver says the transfer ended.
  double finish_send(const Work& work);
  /// group.recv, timed into waited_s_.
  void await(std::uint32_t rank, int tag, std::span<std::uint8_t> into);
  /// Receives the transfer; returns when it starts (it takes `duration`).
  double receive(const Work& work, double ready, double duration);
  int process_of(std::uint32_t rank) const { return plan_.process_of_rank.at(rank); }

  FakeOptions opt_;
  GroupMembership member_;
  DevicePlan plan_;
  Bytes message_;        ///< reused for every transfer
  double waited_s_ = 0;  ///< host time blocked in the group's recv
  std::uint64_t iteration_ = 0, unrecorded_waits_ = 0;
  std::vector<double> clock_, event_time_, start_, end_;
  std::vector<std::uint64_t> event_iteration_;
  std::vector<MemEvent> mem_;
  MemoryUse memory_;
};

}  // namespace ppsched::run
