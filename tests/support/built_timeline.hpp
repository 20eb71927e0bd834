// A schedule and its timeline built by hand, for the tests of views that read a Timeline (trace,
// SVG and ASCII Gantt). Each run() appends an action to a rank's program and a timeline entry for
// it; idle_step() appends a program step that has no entry, as the simulator leaves idle steps.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "ir/schedule.hpp"
#include "sim/timeline.hpp"

namespace ppsched::test {

class BuiltTimeline {
 public:
  explicit BuiltTimeline(std::size_t ranks) : entries_(ranks) { s.ranks.resize(ranks); }

  BuiltTimeline& run(std::size_t rank, Action a, double start, double end, Stream stream = Stream::Compute) {
    entries_[rank].push_back({static_cast<std::uint32_t>(s.ranks[rank].actions.size()), start, end, stream});
    s.ranks[rank].actions.push_back(a);
    return *this;
  }
  BuiltTimeline& idle_step(std::size_t rank) {
    s.ranks[rank].actions.push_back(Action::idle());
    return *this;
  }

  /// The timeline: each entry released by the one before it on its rank, SEND_F(s, m) paired
  /// with RECV_F(s+1, m) and SEND_B(s, m) with RECV_B(s-1, m). The makespan is the latest end
  /// unless one is given.
  Timeline build(std::optional<double> makespan = std::nullopt) const {
    Timeline t;
    t.rank_begin.push_back(0);
    std::map<std::tuple<ActionKind, std::uint32_t, std::uint32_t>, std::uint32_t> index;
    for (std::size_t r = 0; r < entries_.size(); ++r) {
      for (std::size_t i = 0; i < entries_[r].size(); ++i) {
        const Entry& e = entries_[r][i];
        const auto id = static_cast<std::uint32_t>(t.start.size());
        const Action& a = s.ranks[r].actions[e.step];
        index[{a.kind, a.stage, a.index}] = id;
        t.start.push_back(e.start);
        t.end.push_back(e.end);
        t.stream.push_back(e.stream);
        t.step.push_back(e.step);
        t.released_by.push_back(i == 0 ? Timeline::kNone : id - 1);
        t.peer.push_back(Timeline::kNone);
        t.makespan = std::max(t.makespan, e.end);
      }
      t.rank_begin.push_back(static_cast<std::uint32_t>(t.start.size()));
    }
    for (const auto& [key, id] : index) {
      const auto [kind, stage, mb] = key;
      std::optional<std::tuple<ActionKind, std::uint32_t, std::uint32_t>> partner;
      if (kind == ActionKind::SendF) partner = {ActionKind::RecvF, stage + 1, mb};
      if (kind == ActionKind::SendB) partner = {ActionKind::RecvB, stage - 1, mb};
      if (!partner) continue;
      const auto it = index.find(*partner);
      if (it == index.end()) continue;
      t.peer[id] = it->second;
      t.peer[it->second] = id;
    }
    if (makespan) t.makespan = *makespan;
    return t;
  }

  Schedule s;

 private:
  struct Entry {
    std::uint32_t step;
    double start, end;
    Stream stream;
  };
  std::vector<std::vector<Entry>> entries_;
};

/// Two ranks, one microbatch, explicit comms:
///   rank 0: 0F0 [0,1]  0SEND_F0 [1,1.5] (send)   0RECV_B0 [3.5,4] (recv)  0B0 [4,6]
///   rank 1: 1RECV_F0 [1,1.5] (recv)  1F0 [1.5,2.5]  1B0 [2.5,3.5]  1SEND_B0 [3.5,4] (send)
inline BuiltTimeline small_pipeline() {
  auto act = [](ActionKind k, std::uint16_t stage) { return Action::make(k, stage, 0); };
  BuiltTimeline b(2);
  b.run(0, act(ActionKind::F, 0), 0, 1)
      .run(0, act(ActionKind::SendF, 0), 1, 1.5, Stream::Send)
      .run(0, act(ActionKind::RecvB, 0), 3.5, 4, Stream::Recv)
      .run(0, act(ActionKind::B, 0), 4, 6);
  b.run(1, act(ActionKind::RecvF, 1), 1, 1.5, Stream::Recv)
      .run(1, act(ActionKind::F, 1), 1.5, 2.5)
      .run(1, act(ActionKind::B, 1), 2.5, 3.5)
      .run(1, act(ActionKind::SendB, 1), 3.5, 4, Stream::Send);
  return b;
}

}  // namespace ppsched::test
