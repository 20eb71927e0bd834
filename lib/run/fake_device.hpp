// A device without a GPU: it replays each launch's expected duration (Work::expected_us, from the
// cost table and comm model) with CUDA's stream and event semantics, including the one that
// makes host order matter: waiting on an event not yet recorded is a no-op, counted here.
//
// It is what tests the engine, the plan and the statistics on CPU-only machines, and what
// `ppsched run --backend fake` uses: a fake run of a schedule measures exactly what the timed
// simulator predicts, up to the jitter it is given.
#pragma once

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

class FakeRuntime : public DeviceRuntime {
 public:
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
  void setup(const DevicePlan& plan) override;
  void begin_iteration() override;
  void wait(std::uint32_t stream, std::uint32_t event) override;
  void record(std::uint32_t stream, std::uint32_t event) override;
  void launch(std::uint32_t stream, const Work& work, std::uint32_t span) override;
  double end_iteration(std::span<double> span_start_us, std::span<double> span_end_us) override;
  MemoryUse memory_use() const override { return memory_; }
  double ping_pong_us(int peer, std::uint64_t bytes, int repeats) override;
  /// Waits on events not recorded in the current iteration: a race on a real GPU.
  std::uint64_t unrecorded_waits() const { return unrecorded_waits_; }

 private:
  struct MemEvent {
    double time;
    std::int64_t delta;
    int device;
  };
  FakeOptions opt_;
  DevicePlan plan_;
  std::uint64_t iteration_ = 0, unrecorded_waits_ = 0;
  std::vector<double> clock_, event_time_, start_, end_;
  std::vector<std::uint64_t> event_iteration_;
  std::vector<MemEvent> mem_;
  MemoryUse memory_;
};

}  // namespace ppsched::run
