// The timed model kept up to date under moves (incremental_times.hpp).
//
// The rule is the timed simulator's for a compute-only schedule (sim/timed.hpp): an action starts
// at the later of its rank's previous end and its inputs' ends (plus the transfer from another
// rank), and runs for its cost. A move of rank r's window [lo, hi] changes what the window and the
// action after it wait for, and nothing else. Every action that started before the window's
// first action keeps its times: all it waits for, however indirectly, started earlier still, so
// none of it is in the window (every cost is positive). The sweep re-times the rest as the
// simulator runs it (each rank as far as its inputs are there, a rank that waits woken by the
// action it waits for), so a move that closes a cycle of waits is found stuck, as the simulator
// finds it. It stops early once the window is done and no action left waits for a time that
// changed: the rest keeps its times.
#include "synth/auto/incremental_times.hpp"

#include <algorithm>

#include "sim/memory.hpp"
#include "sim/timed.hpp"
#include "synth/auto/shape.hpp"

namespace ppsched::auto_detail {

std::optional<IncrementalTimes> IncrementalTimes::of(Schedule& s, const AutoParams& p) {
  if (shares_devices(p.sim.device_of_rank)) return std::nullopt;
  const Shape shape(p);
  if (s.ranks.size() != p.ranks || s.placement.stage_to_rank != shape.rank_of) return std::nullopt;
  IncrementalTimes t;
  t.s_ = &s;
  t.S_ = shape.stages;
  t.M_ = p.microbatches;
  t.rank_of_ = shape.rank_of;
  t.fwd_in_ = shape.fwd_xfer;
  t.bwd_in_ = shape.bwd_xfer;
  for (std::uint32_t st = 0; st < t.S_; ++st) {
    t.act_.push_back(p.memory.activation_of(st, p.ranks, t.S_));
    t.wgt_.push_back(p.memory.weight_grad_of(st, p.ranks, t.S_));
    if (!(t.fwd_in_[st] >= 0 && t.bwd_in_[st] >= 0)) return std::nullopt;
  }
  for (std::uint32_t r = 0; r < p.ranks; ++r)
    t.base_.push_back(r < p.memory.fixed_per_rank.size() ? p.memory.fixed_per_rank[r] : 0.0);
  const std::size_t keys = std::size_t{3} * t.S_ * t.M_;
  t.start_.assign(keys, kNever);  // so that the first sweep sets every time
  t.end_.assign(keys, 0.0);
  t.dur_.assign(keys, 0.0);
  t.pos_.assign(keys, 0);
  t.has_.assign(keys, 0);
  t.touched_.assign(keys, 0);
  t.changed_.assign(keys, 0);
  for (std::uint32_t r = 0; r < p.ranks; ++r) {
    const std::vector<Action>& ops = s.ranks[r].actions;
    for (std::size_t j = 0; j < ops.size(); ++j) {
      const Action& a = ops[j];
      if (a.is_idle()) continue;  // the simulator skips idle steps
      const bool plain = a.kind == ActionKind::F || a.kind == ActionKind::I || a.kind == ActionKind::W ||
                         a.kind == ActionKind::B;
      if (!plain || a.stage >= t.S_ || a.microbatch() >= t.M_ || t.rank_of_[a.stage] != r) return std::nullopt;
      const double cost = p.sim.costs.cost(a.stage, a.kind);
      const std::size_t k = t.key_of(a);
      if (!(cost > 0) || t.has_[k]) return std::nullopt;  // a zero cost, or the same action twice
      t.has_[k] = 1;
      t.dur_[k] = cost;
      t.pos_[k] = static_cast<std::uint32_t>(j);
      ++t.actions_;
    }
  }
  if (!t.sweep(-kNever, 0, 0, SIZE_MAX)) return std::nullopt;
  t.log_.clear();
  return t;
}


double IncrementalTimes::inputs_ready(const Action& a) const {
  const std::uint32_t c = class_of(a.kind), s = a.stage, m = a.microbatch();
  if (c == kF) return s == 0 ? 0.0 : end_[key(kF, s - 1, m)] + fwd_in_[s];
  if (c == kW) return end_[key(kBwd, s, m)];
  double t = end_[key(kF, s, m)];
  if (s + 1 < S_) t = std::max(t, end_[key(kBwd, s + 1, m)] + bwd_in_[s]);
  return t;
}

bool IncrementalTimes::can_start_sooner(std::uint32_t r, std::size_t from, std::size_t to) const {
  const std::vector<Action>& ops = program(r);
  if (ops[from].is_idle()) return false;  // the timing stays as it is
  // The action that may gain, and the one it no longer waits for.
  std::size_t gains = from, before = next_busy_back(ops, from);
  if (to > from) {
    gains = next_busy(ops, from + 1);
    before = from;
    if (gains > to) return false;  // it passes idle steps only
  }
  if (before == SIZE_MAX) return false;  // nothing before it to stop waiting for
  return inputs_ready(ops[gains]) < end_[key_of(ops[before])];
}

bool IncrementalTimes::first_starts_stand(std::uint32_t r, std::size_t from, std::size_t to) const {
  const std::vector<Action>& ops = program(r);
  const std::size_t lo = std::min(from, to), first = next_busy(ops, lo);
  if (first > std::max(from, to)) return true;  // idle steps only
  if (next_busy(ops, 0) == first) return false;  // the window holds rank r's first action
  const double since = start_[key_of(ops[first])];
  for (std::uint32_t q = 0; q < s_->ranks.size(); ++q)
    if (next_busy(program(q), 0) < program(q).size() && !(first_start(q) < since)) return false;
  return true;
}

bool IncrementalTimes::sweep(double since, std::uint32_t r, std::size_t lo, std::size_t until) {
  // Stamps mark what this sweep has re-timed and which of those times changed. An action it has
  // not reached is there already when it started before `since` (its times stand).
  if (++stamp_ == 0) {  // wrapped: no key may look re-timed
    std::fill(touched_.begin(), touched_.end(), 0);
    std::fill(changed_.begin(), changed_.end(), 0);
    stamp_ = 1;
  }
  const std::uint32_t gen = stamp_;
  auto there = [&](std::size_t k) { return touched_[k] == gen || start_[k] < since; };
  constexpr std::size_t kNone = SIZE_MAX;
  const std::size_t R = s_->ranks.size();
  next_.assign(R, 0);
  runnable_.clear();
  for (std::uint32_t q = 0; q < R; ++q) {
    runnable_.push_back(q);
    if (q == r) {
      next_[q] = lo;
      continue;
    }
    // The first action that started at `since` or later: a rank's starts only grow along its
    // program.
    const std::vector<Action>& ops = program(q);
    std::size_t low = 0, high = ops.size();
    while (low < high) {
      const std::size_t mid = low + (high - low) / 2, busy = next_busy(ops, mid);
      if (busy == ops.size() || start_[key_of(ops[busy])] >= since)
        high = mid;
      else
        low = mid + 1;
    }
    next_[q] = low;
  }
  blocked_on_.assign(R, kNone);
  // Waits on a changed time that nothing has read yet: once there are none and rank r is past
  // `until`, everything left waits only for unchanged times, so its own stand too.
  std::size_t pending = 0;
  auto read = [&](std::size_t k) { pending -= changed_[k] == gen ? 1 : 0; };
  while (!runnable_.empty()) {
    const std::uint32_t q = runnable_.back();
    runnable_.pop_back();
    const std::vector<Action>& ops = program(q);
    std::size_t& j = next_[q];
    std::size_t prev = kNone;  // the key of the rank's previous action, once this run has one
    for (; j < ops.size(); ++j) {
      if (ops[j].is_idle()) continue;
      const Action a = ops[j];
      const std::uint32_t c = class_of(a.kind), s = a.stage, m = a.microbatch();
      const std::size_t k = key(c, s, m);
      // What it waits for from other actions than its rank's previous one (at most two), and the
      // transfer time from each.
      std::size_t in[2] = {kNone, kNone};
      double transfer[2] = {0.0, 0.0};
      if (c == kF) {
        if (s > 0) in[0] = key(kF, s - 1, m), transfer[0] = fwd_in_[s];
      } else if (c == kBwd) {
        in[0] = key(kF, s, m);
        if (s + 1 < S_) in[1] = key(kBwd, s + 1, m), transfer[1] = bwd_in_[s];
      } else {
        in[0] = key(kBwd, s, m);
      }
      const std::size_t missing = in[0] != kNone && !there(in[0]) ? in[0] : in[1] != kNone && !there(in[1]) ? in[1] : kNone;
      if (missing != kNone) {
        blocked_on_[q] = missing;
        break;
      }
      if (prev == kNone && j > 0) {
        const std::size_t before = next_busy_back(ops, j);
        if (before != kNone) prev = key_of(ops[before]);
      }
      // The simulator's rule: the later of the rank's previous end and each input's end plus
      // its transfer.
      double start = 0.0;
      if (prev != kNone) {
        read(prev);
        start = end_[prev];
      }
      for (int i = 0; i < 2; ++i)
        if (in[i] != kNone) {
          read(in[i]);
          start = std::max(start, end_[in[i]] + transfer[i]);
        }
      ++retimed_;
      touched_[k] = gen;
      prev = k;
      if (start != start_[k]) {
        log_.push_back({k, start_[k], end_[k]});
        start_[k] = start;
        end_[k] = start + dur_[k];
        changed_[k] = gen;
        pending += successor_count(c, s, m, ops, j);
      }
      // Another rank waiting for this action can go on.
      const std::uint32_t waiters[2] = {c == kF && s + 1 < S_ ? rank_of_[s + 1] : q, c == kBwd && s > 0 ? rank_of_[s - 1] : q};
      for (std::uint32_t w : waiters)
        if (w != q && blocked_on_[w] == k) {
          blocked_on_[w] = kNone;
          runnable_.push_back(w);
        }
    }
    if (pending == 0 && next_[r] >= until) return true;
  }
  for (std::uint32_t q = 0; q < R; ++q)
    if (next_[q] < program(q).size()) return false;  // stuck
  return true;
}

std::size_t IncrementalTimes::successor_count(std::uint32_t c, std::uint32_t s, std::uint32_t m,
                                              const std::vector<Action>& ops, std::size_t j) const {
  std::size_t n = next_busy(ops, j + 1) < ops.size() ? 1 : 0;
  if (c == kF) n += (s + 1 < S_ ? 1 : 0) + 1;
  if (c == kBwd) n += (s > 0 ? 1 : 0) + has_[key(kW, s, m)];
  return n;
}

void IncrementalTimes::reposition(std::uint32_t r, std::size_t lo, std::size_t hi) {
  const std::vector<Action>& ops = program(r);
  for (std::size_t j = lo; j <= hi; ++j)
    if (!ops[j].is_idle()) pos_[key_of(ops[j])] = static_cast<std::uint32_t>(j);
}

bool IncrementalTimes::move(std::uint32_t r, std::size_t from, std::size_t to) {
  std::vector<Action>& ops = program(r);
  const std::size_t lo = std::min(from, to), hi = std::max(from, to);
  // What started before the window's first action keeps its times: all it waits for, however
  // indirectly, started before it too, so none of it moved (every cost is positive).
  const std::size_t first = next_busy(ops, lo);
  const double since = first <= hi ? start_[key_of(ops[first])] : kNever;
  if (from < to)
    std::rotate(ops.begin() + from, ops.begin() + from + 1, ops.begin() + to + 1);
  else
    std::rotate(ops.begin() + to, ops.begin() + from, ops.begin() + from + 1);
  reposition(r, lo, hi);
  has_move_ = true;
  moved_rank_ = r, moved_from_ = from, moved_to_ = to;
  log_.clear();
  retimed_ = 0;
  // Rank r's window and the action after it wait for other actions than before: the sweep may
  // stop early only past them.
  const std::size_t until = std::min(ops.size(), next_busy(ops, hi + 1) + 1);
  return since == kNever || sweep(since, r, lo, until);  // a window of idle steps changes nothing
}

void IncrementalTimes::restore_logged() {
  for (auto it = log_.rbegin(); it != log_.rend(); ++it) {
    start_[it->k] = it->start;
    end_[it->k] = it->end;
  }
  log_.clear();
}

void IncrementalTimes::undo() {
  if (!has_move_) return;
  has_move_ = false;
  restore_logged();
  std::vector<Action>& ops = program(moved_rank_);
  const std::size_t from = moved_from_, to = moved_to_;
  if (from < to)
    std::rotate(ops.begin() + from, ops.begin() + to, ops.begin() + to + 1);
  else
    std::rotate(ops.begin() + to, ops.begin() + to + 1, ops.begin() + from + 1);
  reposition(moved_rank_, std::min(from, to), std::max(from, to));
}

double IncrementalTimes::first_start(std::uint32_t r) const {
  const std::vector<Action>& ops = program(r);
  const std::size_t first = next_busy(ops, 0);
  return first == ops.size() ? 0.0 : start_[key_of(ops[first])];
}

double IncrementalTimes::last_end(std::uint32_t r) const {
  const std::vector<Action>& ops = program(r);
  std::size_t last = ops.size();
  while (last > 0 && ops[last - 1].is_idle()) --last;
  return last == 0 ? 0.0 : end_[key_of(ops[last - 1])];
}

double IncrementalTimes::peak_if_moved(std::uint32_t r, std::size_t from, std::size_t to) const {
  const std::vector<Action>& ops = program(r);
  const std::size_t lo = std::min(from, to), hi = std::max(from, to);
  RunningPeak mem(base_[r]);
  for (std::size_t j = 0; j < ops.size(); ++j) {
    // the action the move would put at j
    std::size_t at = j;
    if (j == to)
      at = from;
    else if (j >= lo && j <= hi)
      at = from < to ? j + 1 : j - 1;
    const Action& a = ops[at];
    if (!a.is_idle()) mem.add(memory_delta(a.kind, act_[a.stage], wgt_[a.stage]).amount);
  }
  return mem.peak;
}

}  // namespace ppsched::auto_detail
