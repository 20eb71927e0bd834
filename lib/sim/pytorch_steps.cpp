#include "sim/pytorch_steps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "ir/action_text.hpp"
#include "ir/rank_halves.hpp"
#include "ir/user_error.hpp"
#include "passes/done_set.hpp"
#include "sim/step_moments.hpp"

namespace ppsched {

namespace {

// A rank's timeline up to (not including) input position `upto` of its program, then `trailing`
// idle steps: the program, idle steps dropped, with the rank's waits put back (`cells` long).
std::vector<Action> timeline_of(const std::vector<Action>& program, const std::vector<StepWait>& waits,
                                std::size_t cells, const Action* upto, std::size_t trailing) {
  const Action* begin = program.data();
  std::vector<Action> row;
  row.reserve(cells + trailing);
  auto wait = waits.begin();
  for (const Action* a = begin; a != upto; ++a) {
    if (a->is_idle()) continue;
    if (wait != waits.end() && wait->before == static_cast<std::size_t>(a - begin))
      row.insert(row.end(), (wait++)->count, Action::idle());
    row.push_back(*a);
  }
  row.insert(row.end(), trailing, Action::idle());
  return row;
}

class StepSimulator {
 public:
  StepSimulator(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank, std::uint32_t num_stages,
                std::uint32_t microbatches = 0)
      : s_(s),
        stage_to_rank_(stage_to_rank),
        last_stage_(static_cast<std::int64_t>(num_stages) - 1),
        microbatches_(microbatches ? microbatches : microbatches_in_use(s)) {}

  // Simulates, then writes the timelines into `out` (which may be the input itself: each rank's
  // timeline replaces its program only once every rank has run, and is built from that program
  // and where the rank waited). The simulation keeps no timeline: only, per rank, the runs of
  // idle steps, so a dry run holds the schedule and its timelines at no time together, rather than
  // both whole (issue 48). On a throw `out` is unchanged.
  StepWaits run(std::size_t max_cells, bool lock_step_only = false) {
    const auto ranks = static_cast<std::uint32_t>(s_.rank_count());
    // Each step runs an action (else it is a deadlock), so no count of steps passes the input's.
    if (s_.step_count() > 0xFFFFFFFFu)
      throw std::length_error("PyTorch's lock-step simulation takes at most 2^32 - 1 steps of input");
    // A well-formed schedule that finishes is placed action by action (step_moments.hpp); the
    // lock-step loop below takes everything else, and says what PyTorch would.
    if (std::optional<StepWaits> placed =
            lock_step_only ? std::nullopt : step_waits_by_moments(s_, stage_to_rank_, last_stage_, microbatches_);
        placed && total(placed->cells) <= max_cells)
      return std::move(*placed);
    done_.emplace(stage_to_rank_, microbatches_, s_.step_count());
    waits_.assign(ranks, {});
    cells_.assign(ranks, 0);
    // Ranks with something left to run, ascending (PyTorch's dict, rebuilt in sorted order).
    std::vector<Lane> active;
    for (std::uint32_t r = 0; r < ranks; ++r) {
      const auto& p = s_.ranks[r].actions;
      Lane lane{p.data(), p.data(), p.data() + p.size(), r};
      skip_idle(lane);
      if (lane.next == lane.end) continue;
      active.push_back(lane);
    }
    // PyTorch runs a first step as long as it has ranks, empty ones included: if no rank has an
    // action, nothing runs in it and that is "not progressing" (with no rank stuck).
    if (active.empty() && ranks > 0) throw SimDeadlock(partial(active), {});
    std::vector<Lane*> waiting;  // ranks that idled in this step's first pass
    std::size_t cells = 0;
    while (!active.empty()) {
      cells += active.size();
      if (cells > max_cells)
        throw std::length_error(fmt::format(
            "PyTorch's lock-step simulation passed {} cells (one per rank per step) before finishing: a long chain "
            "of dependencies over many ranks makes its grid grow with ranks x steps. The timed model "
            "(--simulator timed) is linear in the schedule",
            max_cells));
      waiting.clear();
      bool progress = false;
      for (Lane& lane : active) {
        const Action a = *lane.next;
        if (ready(lane, a)) {
          run_action(lane, a);
          progress = true;
        } else {
          ++lane.idle;
          waiting.push_back(&lane);
        }
      }
      // Second pass: an idle slot of this step goes to a head that has become ready since.
      // A waiting rank did not move in the first pass, so it has not finished.
      for (Lane* lane : waiting) {
        const Action a = *lane->next;
        if (ready(*lane, a)) {
          --lane->idle;
          run_action(*lane, a);
        }
      }
      if (finished_any_) {
        std::erase_if(active, [](const Lane& lane) { return lane.next == lane.end; });
        finished_any_ = false;
      }
      if (!progress) {
        std::vector<SimDeadlock::Stuck> stuck;
        stuck.reserve(active.size());
        for (const Lane& lane : active) stuck.push_back({lane.rank, lane.index()});
        throw SimDeadlock(partial(active), std::move(stuck));
      }
    }
    return {std::move(waits_), std::move(cells_)};
  }

  /// The empty schedule `run` fills: s's ranks, sub-action table, sizes and placement.
  Schedule empty_out() const {
    Schedule out;
    out.ranks.resize(s_.rank_count());
    out.sub_actions = s_.sub_actions;
    out.placement = s_.placement;
    out.num_microbatches = s_.num_microbatches;
    return out;
  }

 private:
  // One rank's progress: its input program, where it stands in it, and how long it has waited.
  struct Lane {
    const Action* begin;
    const Action* next;  // its next action (never an idle step)
    const Action* end;
    std::uint32_t rank;
    std::uint32_t idle = 0;  // idle steps since its last action ran
    std::size_t index() const { return static_cast<std::size_t>(next - begin); }
  };
  // `count` idle steps before the action at input index `before`.
  // 32-bit, as run() checks: a wait per action at most, so 8 bytes each keeps them small.
  using Wait = StepWait;
  static std::size_t total(const std::vector<std::size_t>& cells) {
    std::size_t n = 0;
    for (std::size_t c : cells) n += c;
    return n;
  }

  // Rank r's timeline up to (not including) input position `upto`, then `trailing` idle steps.
  std::vector<Action> timeline(std::uint32_t r, const Action* upto, std::size_t trailing) const {
    return timeline_of(s_.ranks[r].actions, waits_[r], cells_[r], upto, trailing);
  }

  // PyTorch's "WIP comms schedule": what ran, each stuck rank with this step's idle included.
  Schedule partial(const std::vector<Lane>& active) const {
    Schedule out = empty_out();
    out.num_stages = last_stage_ >= 0 ? static_cast<std::uint32_t>(last_stage_ + 1) : 0;
    for (std::uint32_t r = 0; r < out.ranks.size(); ++r) {
      const auto& p = s_.ranks[r].actions;
      const Lane* lane = nullptr;
      for (const Lane& l : active)
        if (l.rank == r) lane = &l;
      out.ranks[r].actions = lane ? timeline(r, lane->next, lane->idle) : timeline(r, p.data() + p.size(), 0);
    }
    return out;
  }

  // Also fetches the lane's program four cache lines ahead: a step reads one action of every rank,
  // and the hardware prefetcher follows fewer streams than a 64-rank schedule has lanes, so without
  // this each lane's next line was a miss: a third of a 6M-action dry run's time (issue 48).
  static void skip_idle(Lane& lane) {
    while (lane.next != lane.end && lane.next->is_idle()) ++lane.next;
    __builtin_prefetch(lane.next + 32);
  }

  // Records what the rank ran and moves on to its next action.
  void run_action(Lane& lane, const Action& a) {
    if (lane.idle) {
      waits_[lane.rank].push_back({static_cast<std::uint32_t>(lane.index()), lane.idle});
      cells_[lane.rank] += lane.idle;
      lane.idle = 0;
    }
    ++cells_[lane.rank];
    if (a.is_container()) {
      for (const Action& sub : s_.subs(a)) mark_done(lane.rank, sub);
    } else {
      mark_done(lane.rank, a);
    }
    ++lane.next;
    skip_idle(lane);
    finished_any_ |= lane.next == lane.end;
  }

  void mark_done(std::uint32_t rank, const Action& a) {
    if (DoneSet::recorded(a.kind)) done_->insert(rank, a.stage, a.kind, a.index);
  }
  bool done(std::uint32_t rank, std::int64_t stage, ActionKind kind, std::uint32_t microbatch) const {
    // No action of the IR has a stage outside 0..kMaxStage, so such a query finds nothing.
    if (stage < 0 || stage > Action::kMaxStage) return false;
    return done_->contains(rank, static_cast<std::uint16_t>(stage), kind, microbatch);
  }

  // PyTorch's `_ready_to_schedule` for the lane's next action `a` (the lane only names it in errors).
  bool ready(const Lane& r, const Action& a) const {
    if (!a.is_container()) return ready_plain(r, a, a);
    if (a.kind != ActionKind::OverlapFB || s_.subs(a).empty())
      fail(r, a, a, "a container other than a non-empty OVERLAP_F_B has no stage", "-1");
    for (const Action& sub : s_.subs(a)) {
      if (sub.is_container()) fail(r, a, sub, "a container inside a container has no stage", "-1");
      if (!ready_plain(r, a, sub)) return false;
    }
    return true;
  }

  // `a` is a plain action (a sub-action of `head` when head is a container).
  bool ready_plain(const Lane& r, const Action& head, const Action& a) const {
    const std::int64_t s = a.stage;
    const std::uint32_t m = a.index;
    // PyTorch looks up the owner of the action's stage first, whatever the kind.
    const std::uint32_t owner = owner_of(r, head, a, s);
    switch (a.kind) {
      case ActionKind::F:
        return s == 0 || done(owner, s, ActionKind::RecvF, m) || done(owner, s - 1, ActionKind::F, m);
      case ActionKind::I:
      case ActionKind::B:
        return s == last_stage_ || done(owner, s, ActionKind::RecvB, m) || done(owner, s + 1, ActionKind::I, m) ||
               done(owner, s + 1, ActionKind::B, m);
      case ActionKind::W:
        return true;
      case ActionKind::SendF:
        return done(owner, s, ActionKind::F, m);
      case ActionKind::SendB:
        return done(owner, s, ActionKind::I, m) || done(owner, s, ActionKind::B, m);
      case ActionKind::RecvF:
        return done(owner_of(r, head, a, s - 1), s - 1, ActionKind::SendF, m);
      case ActionKind::RecvB:
        return done(owner_of(r, head, a, s + 1), s + 1, ActionKind::SendB, m);
      case ActionKind::Unshard:
      case ActionKind::Reshard:
      case ActionKind::ReduceGrad:
        return true;  // ppsched's extension
      case ActionKind::OverlapFB:
      case ActionKind::Idle:
        break;
    }
    // A plain OVERLAP_F_B (or Idle) cannot come out of the parser; PyTorch has no rule for it.
    fail(r, head, a, "no readiness rule for this action", "");
  }

  // stage_to_rank(stage), or PyTorch's KeyError.
  std::uint32_t owner_of(const Lane& r, const Action& head, const Action& a, std::int64_t stage) const {
    if (stage >= 0 && static_cast<std::uint64_t>(stage) < stage_to_rank_.size()) {
      const std::uint32_t owner = stage_to_rank_[static_cast<std::size_t>(stage)];
      if (owner < s_.rank_count()) return owner;
    }
    no_owner(r, head, a, stage);
  }

  [[noreturn]] [[gnu::noinline]] void no_owner(const Lane& r, const Action& head, const Action& a,
                                               std::int64_t stage) const {
    const std::string key = std::to_string(stage);
    if (stage < 0 || static_cast<std::uint64_t>(stage) >= stage_to_rank_.size() ||
        stage_to_rank_[static_cast<std::size_t>(stage)] == kUnplaced)
      fail(r, head, a, "stage " + key + " has no rank in the stage-to-rank map", key);
    const std::uint32_t owner = stage_to_rank_[static_cast<std::size_t>(stage)];
    fail(r, head, a,
         "stage " + key + " is placed on rank " + std::to_string(owner) + ", but the schedule has " +
             std::to_string(s_.rank_count()) + " ranks",
         std::to_string(owner));
  }

  [[noreturn]] [[gnu::noinline]] void fail(const Lane& r, const Action& head, const Action& a, const std::string& why,
                                           const std::string& key_error) const {
    std::string msg = "simulate: rank " + std::to_string(r.rank) + ", action " + std::to_string(r.index()) + " (";
    append_action_text(msg, head, s_.sub_actions);
    msg += ")";
    if (!(a == head)) {
      msg += ", sub-action ";
      append_action_text(msg, a, s_.sub_actions);
    }
    msg += ": " + why;
    if (!key_error.empty()) msg += " (PyTorch: KeyError: " + key_error + ")";
    throw UserError(msg);
  }

  const Schedule& s_;
  const std::vector<std::uint32_t>& stage_to_rank_;
  std::int64_t last_stage_;
  std::uint32_t microbatches_;            // microbatches_in_use(s)
  std::optional<DoneSet> done_;           // what each rank has run (the lock-step loop only)
  std::vector<std::vector<Wait>> waits_;  // per rank, where it waited, in order
  std::vector<std::size_t> cells_;        // per rank, its timeline's length so far
  bool finished_any_ = false;             // a rank ran its last action in this step
};

}  // namespace

StepWaits pytorch_step_waits(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                             std::uint32_t num_stages, std::size_t max_cells, std::uint32_t microbatches,
                             bool lock_step_only) {
  return StepSimulator(s, stage_to_rank, num_stages, microbatches).run(max_cells, lock_step_only);
}

// Rank by rank, each half of the ranks on its own thread (ir/rank_halves.hpp): a rank reads only
// its own program, which its timeline then replaces when `out` is `programs`.
void put_step_timelines(const Schedule& programs, const StepWaits& waits, std::uint32_t num_stages, Schedule& out) {
  for_rank_halves(programs, [&](std::size_t, std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r) {
      const auto& p = programs.ranks[r].actions;
      std::vector<Action> timeline = timeline_of(p, waits.waits[r], waits.cells[r], p.data() + p.size(), 0);
      out.ranks[r].actions = std::move(timeline);
    }
  });
  out.num_stages = num_stages;
}

Schedule simulate_pytorch_steps(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                std::uint32_t num_stages, std::size_t max_cells, bool lock_step_only) {
  StepSimulator sim(s, stage_to_rank, num_stages);
  const StepWaits waits = sim.run(max_cells, lock_step_only);
  Schedule out = sim.empty_out();
  put_step_timelines(s, waits, num_stages, out);
  return out;
}

}  // namespace ppsched
