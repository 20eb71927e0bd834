// A ProcessGroup whose processes are threads of one test: the multi-process engine tested
// without a launcher, under the sanitizers, in milliseconds. The real one is run/mpi/.
//
// Collectives: each thread deposits its bytes; the last to arrive publishes every deposit and
// wakes the others. A thread cannot deposit for the next collective before all have arrived at
// this one, so the published set is read before it is replaced.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "run/process_group.hpp"

namespace ppsched::test {

class ThreadWorld {
 public:
  /// `node_of` gives each process's node (default: all on node 0).
  explicit ThreadWorld(int size, std::vector<int> node_of = {}) : size_(size), slots_(size) {
    if (node_of.empty()) node_of.assign(size, 0);
    for (int p = 0; p < size; ++p) {
      run::ProcessPlace place;
      place.node = node_of[p];
      place.host = "node" + std::to_string(node_of[p]);
      place.local_size = 0;
      for (int q = 0; q < size; ++q) {
        if (node_of[q] != node_of[p]) continue;
        if (q < p) ++place.local_rank;
        ++place.local_size;
      }
      places_.push_back(place);
    }
  }
  int size() const { return size_; }
  const std::vector<run::ProcessPlace>& places() const { return places_; }

  std::vector<run::Bytes> exchange(int rank, run::Bytes mine, double timeout_s, const char* what) {
    std::unique_lock lock(m_);
    const std::uint64_t generation = generation_;
    slots_[rank] = std::move(mine);
    if (++arrived_ == size_) {
      published_ = slots_;
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return published_;
    }
    if (!cv_.wait_for(lock, seconds(timeout_s), [&] { return generation_ != generation; }))
      throw run::GroupError(std::string("process ") + std::to_string(rank) + ": " + what + " timed out");
    return published_;
  }

  void post(int from, int to, int tag, run::Bytes bytes) {
    std::lock_guard lock(m_);
    mail_[{from, to, tag}].push_back(std::move(bytes));
    cv_.notify_all();
  }

  run::Bytes take(int from, int to, int tag, double timeout_s) {
    std::unique_lock lock(m_);
    auto& box = mail_[{from, to, tag}];
    if (!cv_.wait_for(lock, seconds(timeout_s), [&] { return !box.empty(); }))
      throw run::GroupError("process " + std::to_string(to) + ": no message from process " + std::to_string(from) +
                            " (tag " + std::to_string(tag) + ") within " + std::to_string(timeout_s) + " s");
    run::Bytes b = std::move(box.front());
    box.pop_front();
    return b;
  }

 private:
  static std::chrono::duration<double> seconds(double s) { return std::chrono::duration<double>(s); }
  int size_;
  std::vector<run::ProcessPlace> places_;
  std::mutex m_;
  std::condition_variable cv_;
  std::vector<run::Bytes> slots_, published_;
  int arrived_ = 0;
  std::uint64_t generation_ = 0;
  std::map<std::tuple<int, int, int>, std::deque<run::Bytes>> mail_;
};

class ThreadGroup final : public run::ProcessGroup {
 public:
  ThreadGroup(ThreadWorld& world, int rank) : world_(world), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return world_.size(); }
  const std::vector<run::ProcessPlace>& places() const override { return world_.places(); }
  std::string implementation() const override { return "threads"; }
  void barrier(double timeout_s) override { world_.exchange(rank_, {}, timeout_s, "barrier"); }
  void broadcast(run::Bytes& bytes, int root, double timeout_s) override {
    bytes = world_.exchange(rank_, bytes, timeout_s, "broadcast").at(root);
  }
  std::vector<run::Bytes> all_gather(std::span<const std::uint8_t> bytes, double timeout_s) override {
    return world_.exchange(rank_, run::Bytes(bytes.begin(), bytes.end()), timeout_s, "all_gather");
  }
  double all_max(double value, double timeout_s) override {
    const auto* p = reinterpret_cast<const std::uint8_t*>(&value);
    double best = value;
    for (const run::Bytes& b : world_.exchange(rank_, run::Bytes(p, p + sizeof value), timeout_s, "all_max")) {
      double v;
      std::memcpy(&v, b.data(), sizeof v);
      best = std::max(best, v);
    }
    return best;
  }
  void send(int peer, int tag, std::span<const std::uint8_t> bytes) override {
    world_.post(rank_, peer, tag, run::Bytes(bytes.begin(), bytes.end()));
  }
  void recv(int peer, int tag, std::span<std::uint8_t> into, double timeout_s) override {
    run::Bytes b = world_.take(peer, rank_, tag, timeout_s);
    if (b.size() != into.size())
      throw run::GroupError("process " + std::to_string(rank_) + ": expected " + std::to_string(into.size()) +
                            " bytes from process " + std::to_string(peer) + ", got " + std::to_string(b.size()));
    std::copy(b.begin(), b.end(), into.begin());
  }
  [[noreturn]] void abort(int code) override {
    throw run::GroupError("process " + std::to_string(rank_) + " aborted the job with " + std::to_string(code));
  }

 private:
  ThreadWorld& world_;
  int rank_;
};

/// Runs body(group) on `size` threads, one per process; rethrows the first exception.
template <typename Body>
void run_processes(ThreadWorld& world, Body body) {
  std::vector<std::exception_ptr> errors(world.size());
  std::vector<std::thread> threads;
  for (int p = 0; p < world.size(); ++p)
    threads.emplace_back([&, p] {
      ThreadGroup group(world, p);
      try {
        body(group);
      } catch (...) {
        errors[p] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace ppsched::test
