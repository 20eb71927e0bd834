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
#include "auto/incremental_times.hpp"

#include <algorithm>

#include "auto/shape.hpp"
#include "sim/memory.hpp"
#include "sim/timed.hpp"

namespace ppsched::auto_detail {

std::optional<IncrementalTimes> IncrementalTimes::of(Schedule& s, const AutoParams& p) {
  if (shares_devices(p.sim.device_of_rank)) return std::nullopt;
  const Shape shape(p);
  if (s.ranks.size() != p.ranks || s.placement.stage_to_rank != shape.rank_of) return std::nullopt;
  IncrementalTimes t;
  t.s_ = &s;
  t.stages_ = shape.stages;
  t.microbatches_ = p.microbatches;
  t.rank_of_ = shape.rank_of;
  t.fwd_in_ = shape.fwd_xfer;
  t.bwd_in_ = shape.bwd_xfer;
  for (std::uint32_t st = 0; st < t.stages_; ++st) {
    t.act_.push_back(p.memory.activation_of(st, p.ranks, t.stages_));
    t.wgt_.push_back(p.memory.weight_grad_of(st, p.ranks, t.stages_));
    if (!(t.fwd_in_[st] >= 0 && t.bwd_in_[st] >= 0)) return std::nullopt;
  }
  for (std::uint32_t r = 0; r < p.ranks; ++r)
    t.base_.push_back(r < p.memory.fixed_per_rank.size() ? p.memory.fixed_per_rank[r] : 0.0);
  const std::size_t keys = std::size_t{3} * t.stages_ * t.microbatches_;
  if (keys >= kNoInput) return std::nullopt;
  t.start_.assign(keys, kNever);  // so that the first sweep sets every time
  t.end_.assign(keys, 0.0);
  t.dur_.assign(keys, 0.0);
  t.has_.assign(keys, 0);
  t.mark_.assign(keys, 0);
  for (std::uint32_t r = 0; r < p.ranks; ++r) {
    const std::vector<Action>& ops = s.ranks[r].actions;
    for (std::size_t j = 0; j < ops.size(); ++j) {
      const Action& a = ops[j];
      if (a.is_idle()) continue;  // the simulator skips idle steps
      const bool plain =
          a.kind == ActionKind::F || a.kind == ActionKind::I || a.kind == ActionKind::W || a.kind == ActionKind::B;
      if (!plain || a.stage >= t.stages_ || a.microbatch() >= t.microbatches_ || t.rank_of_[a.stage] != r)
        return std::nullopt;
      const double cost = p.sim.costs.cost(a.stage, a.kind);
      const std::size_t k = t.key_of(a);
      if (!(cost > 0) || t.has_[k]) return std::nullopt;  // a zero cost, or the same action twice
      t.has_[k] = 1;
      t.dur_[k] = cost;
      ++t.actions_;
    }
  }
  // What each action waits for besides its rank's previous action, and what waits for it.
  t.waits_.resize(keys);
  for (std::uint32_t st = 0; st < t.stages_; ++st)
    for (std::uint32_t m = 0; m < t.microbatches_; ++m) {
      Waits& f = t.waits_[t.key(kF, st, m)];
      if (st > 0) f.in[0] = static_cast<std::uint32_t>(t.key(kF, st - 1, m)), f.transfer[0] = t.fwd_in_[st];
      f.other_rank = st + 1 < t.stages_ ? t.rank_of_[st + 1] : t.rank_of_[st];
      f.data_successors = (st + 1 < t.stages_ ? 1 : 0) + 1;
      Waits& b = t.waits_[t.key(kBwd, st, m)];
      b.in[0] = static_cast<std::uint32_t>(t.key(kF, st, m));
      if (st + 1 < t.stages_)
        b.in[1] = static_cast<std::uint32_t>(t.key(kBwd, st + 1, m)), b.transfer[1] = t.bwd_in_[st];
      b.other_rank = st > 0 ? t.rank_of_[st - 1] : t.rank_of_[st];
      b.data_successors = (st > 0 ? 1 : 0) + t.has_[t.key(kW, st, m)];
      Waits& w = t.waits_[t.key(kW, st, m)];
      w.in[0] = static_cast<std::uint32_t>(t.key(kBwd, st, m));
      w.other_rank = t.rank_of_[st];
    }
  for (std::uint32_t r = 0; r < p.ranks; ++r) t.count_levels(r);
  t.begin_sweep(-kNever, 0, 0, SIZE_MAX);
  if (t.run_sweep(false) != Retimed::Done) return std::nullopt;
  t.log_.clear();
  return t;
}

double IncrementalTimes::inputs_ready(const Action& a) const {
  const Waits& w = waits_[key_of(a)];
  double t = 0.0;
  for (int i = 0; i < 2; ++i)
    if (w.in[i] != kNoInput) t = std::max(t, end_[w.in[i]] + w.transfer[i]);
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
  if (first > std::max(from, to)) return true;   // idle steps only
  if (next_busy(ops, 0) == first) return false;  // the window holds rank r's first action
  const double since = start_[key_of(ops[first])];
  for (std::uint32_t q = 0; q < s_->ranks.size(); ++q)
    if (next_busy(program(q), 0) < program(q).size() && !(first_start(q) < since)) return false;
  return true;
}

void IncrementalTimes::begin_sweep(double since, std::uint32_t r, std::size_t lo, std::size_t until) {
  // Stamps mark what this sweep has re-timed, which of those times changed, and which start
  // sooner than before. An action it has not reached is there already when it started before
  // `since` (its times stand).
  if (++stamp_ == (std::uint32_t{1} << (32 - kFlagBits))) {  // wrapped: no key may look re-timed
    std::fill(mark_.begin(), mark_.end(), 0);
    stamp_ = 1;
  }
  since_ = since;
  window_rank_ = r;
  until_ = until;
  pending_ = pending_sooner_ = 0;
  const std::size_t R = s_->ranks.size();
  next_.assign(R, 0);
  hint_.resize(R, 0);
  runnable_.clear();
  for (std::uint32_t q = 0; q < R; ++q) {
    if (q != r) runnable_.push_back(q);
    if (q == r) {
      next_[q] = lo;
      continue;
    }
    // The first action that started at `since` or later (a rank's starts only grow along its
    // program), looked for from where the last sweep found it: the moves the local search tries
    // one after another start their windows close together.
    const std::vector<Action>& ops = program(q);
    std::size_t j = next_busy(ops, std::min(hint_[q], ops.size()));
    while (j < ops.size() && start_[key_of(ops[j])] < since) j = next_busy(ops, j + 1);
    for (std::size_t b = next_busy_back(ops, j); b != kNoKey && start_[key_of(ops[b])] >= since;
         b = next_busy_back(ops, b))
      j = b;
    next_[q] = hint_[q] = j;
  }
  if (r < R) runnable_.push_back(r);  // the window's rank first
  blocked_on_.assign(R, kNoKey);
}

IncrementalTimes::Retimed IncrementalTimes::run_sweep(bool stop_if_nothing_sooner) {
  // The hot loop of the local search: the arrays and counters in locals, so that a store to one
  // array does not make the compiler load the others' addresses again.
  const std::uint32_t done = stamp_ << kFlagBits;
  const double since = since_;
  double* const start_at = start_.data();
  double* const end_at = end_.data();
  const double* const dur = dur_.data();
  std::uint32_t* const mark = mark_.data();
  const Waits* const waits = waits_.data();
  std::size_t retimed = retimed_;
  std::size_t pending = pending_, pending_sooner = pending_sooner_;
  auto there = [&](std::size_t k) { return (mark[k] & ~kFlags) == done || start_at[k] < since; };
  // pending counts the waits on a changed time that nothing has read yet: once there are none
  // and the window's rank is past `until_`, everything left waits only for unchanged times, so
  // its own stand too. pending_sooner counts those on a time that got sooner: once there are
  // none past the window, nothing left can start sooner, as it waits only for times that stand
  // or grew.
  auto read = [&](std::size_t k) {
    const std::uint32_t m = mark[k];
    if ((m & ~kFlags) != done) return;
    pending -= m & kChanged ? 1 : 0;
    pending_sooner -= m & kSooner ? 1 : 0;
  };
  Retimed result = Retimed::Done;
  bool stopped = false;
  while (!runnable_.empty() && !stopped) {
    const std::uint32_t q = runnable_.back();
    runnable_.pop_back();
    const std::vector<Action>& ops = program(q);
    std::size_t j = next_[q];
    std::size_t prev = kNoKey;  // the key of the rank's previous action, once this run has one
    for (; j < ops.size(); ++j) {
      const Action a = ops[j];
      if (a.is_idle()) continue;
      const std::size_t k = key_of(a);
      const Waits& w = waits[k];
      if (w.in[0] != kNoInput && !there(w.in[0])) {
        blocked_on_[q] = w.in[0];
        break;
      }
      if (w.in[1] != kNoInput && !there(w.in[1])) {
        blocked_on_[q] = w.in[1];
        break;
      }
      if (prev == kNoKey && j > 0) {
        const std::size_t before = next_busy_back(ops, j);
        if (before != kNoKey) prev = key_of(ops[before]);
      }
      // The simulator's rule: the later of the rank's previous end and each input's end plus
      // its transfer.
      double start = 0.0;
      if (prev != kNoKey) {
        read(prev);
        start = end_at[prev];
      }
      for (int i = 0; i < 2; ++i)
        if (w.in[i] != kNoInput) {
          read(w.in[i]);
          start = std::max(start, end_at[w.in[i]] + w.transfer[i]);
        }
      ++retimed;
      prev = k;
      std::uint32_t flags = 0;
      if (start != start_at[k]) {
        const std::size_t waiting = w.data_successors + (next_busy(ops, j + 1) < ops.size() ? 1 : 0);
        if (start < start_at[k]) {
          flags |= kSooner;
          pending_sooner += waiting;
        }
        log_.push_back({k, start_at[k], end_at[k]});
        start_at[k] = start;
        end_at[k] = start + dur[k];
        flags |= kChanged;
        pending += waiting;
      }
      mark[k] = done | flags;
      // Another rank waiting for this action can go on.
      if (w.other_rank != q && blocked_on_[w.other_rank] == k) {
        blocked_on_[w.other_rank] = kNoKey;
        runnable_.push_back(w.other_rank);
      }
    }
    next_[q] = j;
    if (next_[window_rank_] >= until_) {
      if (pending == 0) {
        stopped = true;
      } else if (stop_if_nothing_sooner && pending_sooner == 0) {
        result = Retimed::NothingSooner;
        stopped = true;
      }
    }
  }
  pending_ = pending;
  pending_sooner_ = pending_sooner;
  retimed_ = retimed;
  if (stopped) return result;
  for (std::uint32_t q = 0; q < s_->ranks.size(); ++q)
    if (next_[q] < program(q).size()) return Retimed::Stuck;
  return Retimed::Done;
}

IncrementalTimes::Retimed IncrementalTimes::finish() { return run_sweep(false); }

bool IncrementalTimes::first_start_known(std::uint32_t r) const {
  const std::vector<Action>& ops = program(r);
  const std::size_t first = next_busy(ops, 0);
  return first == ops.size() || there(key_of(ops[first]));
}

IncrementalTimes::Retimed IncrementalTimes::move(std::uint32_t r, std::size_t from, std::size_t to,
                                                 bool stop_if_nothing_sooner) {
  keep();
  std::vector<Action>& ops = program(r);
  const std::size_t lo = std::min(from, to), hi = std::max(from, to);
  // What started before the window's first action keeps its times: all it waits for, however
  // indirectly, started before it too, so none of it moved (every cost is positive).
  const std::size_t first = next_busy(ops, lo);
  const double since = first <= hi ? start_[key_of(ops[first])] : kNever;
  move_action(ops, from, to);
  has_move_ = true;
  moved_rank_ = r, moved_from_ = from, moved_to_ = to;
  log_.clear();
  retimed_ = 0;
  // Rank r's window and the action after it wait for other actions than before: the sweep may
  // stop early only past them.
  const std::size_t until = std::min(ops.size(), next_busy(ops, hi + 1) + 1);
  if (since == kNever) {  // a window of idle steps changes nothing
    since_ = kNever;
    return Retimed::Done;
  }
  begin_sweep(since, r, lo, until);
  return run_sweep(stop_if_nothing_sooner);
}

void IncrementalTimes::restore_logged() {
  for (auto it = log_.rbegin(); it != log_.rend(); ++it) {
    start_[it->k] = it->start;
    end_[it->k] = it->end;
  }
  log_.clear();
}

void IncrementalTimes::keep() {
  if (!has_move_) return;
  has_move_ = false;
  log_.clear();
  count_levels(moved_rank_);
}

void IncrementalTimes::count_levels(std::uint32_t r) {
  const std::vector<Action>& ops = program(r);
  const std::size_t n = ops.size();
  levels_.resize(s_->ranks.size());
  peak_before_.resize(s_->ranks.size());
  peak_after_.resize(s_->ranks.size());
  std::vector<double>&level = levels_[r], &before = peak_before_[r], &after = peak_after_[r];
  level.resize(n + 1);
  before.resize(n + 1);
  after.assign(n + 1, -kNever);
  RunningPeak mem(base_[r]);
  for (std::size_t j = 0; j < n; ++j) {
    level[j] = mem.level;
    before[j] = mem.peak;
    if (!ops[j].is_idle()) mem.add(held(r, j));
  }
  level[n] = mem.level;
  before[n] = mem.peak;
  for (std::size_t j = n; j-- > 0;) after[j] = std::max(after[j + 1], level[j + 1]);
}

void IncrementalTimes::undo() {
  if (!has_move_) return;
  has_move_ = false;
  restore_logged();
  move_action(program(moved_rank_), moved_to_, moved_from_);
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
  if (!(has_move_ && moved_rank_ == r)) {
    // The levels before the window and after it are the kept order's: the window holds the same
    // actions, so it ends at the same level.
    RunningPeak mem(levels_[r][lo]);
    mem.peak = peak_before_[r][lo];
    for (std::size_t j = lo; j <= hi; ++j) {
      const std::size_t at = j == to ? from : from < to ? j + 1 : j - 1;
      if (!ops[at].is_idle()) mem.add(held(r, at));
    }
    return std::max(mem.peak, peak_after_[r][hi + 1]);
  }
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
