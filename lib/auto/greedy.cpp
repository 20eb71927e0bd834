// The greedy list scheduler (greedy.hpp): each rank, whenever it is free, runs the most urgent
// action that is ready (see greedy.hpp for the rules, GreedyPolicy for the variants).
#include "auto/greedy.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/memory.hpp"

namespace ppsched::auto_detail {

namespace {

// The next decision time of each rank, at most one per rank, kept in a winner tree (a tournament)
// over the ranks: each inner node holds the earlier of its two children's entries, the left one on
// a tie, and the left subtree holds the lower ranks, so the root is the next (time, rank) to decide.
// Why not a binary heap: a decision pops the root and re-queues the same rank, and a heap pays a
// sift-down and a sift-up with two-key comparisons for that; here lowering a key walks up only
// while it wins, and the rank that decides is settled once, after its decision, with one pass up
// its path of log2(ranks) single comparisons (the heap was much of the greedy's work: docs/bench.md).
class DecisionQueue {
 public:
  explicit DecisionQueue(std::uint32_t ranks) {
    while (leaves_ < ranks) leaves_ *= 2;
    node_.assign(2 * std::size_t{leaves_}, Entry{key(kNever), 0});
    for (std::uint32_t r = 0; r < leaves_; ++r) node_[leaves_ + r].rank = r;
    rebuild();
  }

  /// The rank to decide next and its time; call settle() first.
  bool empty() const { return node_[1].key == key(kNever); }
  std::uint32_t top() const { return node_[1].rank; }
  double top_time() const { return std::bit_cast<double>(node_[1].key); }

  /// Takes the top rank out of the queue. Its path keeps a stale entry until settle(), which the
  /// caller runs after the decision: every key lowered meanwhile is at or after the taken time,
  /// so a walk that stops at a stale entry would have stopped at the settled one too, or is
  /// redone by settle().
  void take_top() {
    taken_ = node_[1].rank;
    node_[leaves_ + taken_].key = key(kNever);
  }
  void settle() {
    if (taken_ == kNone) return;
    // The winner so far stays in registers on the way up, and which side wins (as good as random)
    // is not a branch (keep_lower): with the parent reloaded from the store just made, or a
    // branch on the side, this walk was much of the greedy's time (docs/bench.md).
    std::size_t i = std::size_t{leaves_} + taken_;
    std::uint64_t best = node_[i].key;
    std::uint32_t rank = taken_;
    Entry* const node = node_.data();
    for (; i > 1; i /= 2) {
      const Entry sibling = node[i ^ 1];
      // (time, rank) order is the left one on a tie: the left subtree holds the lower ranks, so on
      // a tie the path's entry stays when the path comes from the left (i even). That is one
      // comparison of keys with the sibling's key raised by one: no rank on the dependency chain
      // (where it cost a share of every run: docs/bench.md). Keys are at most kNever's bits, so
      // no overflow.
      keep_lower(best, rank, sibling.key + (~i & 1), sibling.key, sibling.rank);
      node[i / 2] = {best, rank};
    }
    taken_ = kNone;
  }

  /// When rank r is queued to decide (kNever: not queued); at the top of the loop, after settle().
  double time_of(std::uint32_t r) const { return std::bit_cast<double>(node_[leaves_ + r].key); }
  /// Moves every queued time `delta` later (the steady-state skip); after settle().
  void shift(double delta) {
    for (std::uint32_t r = 0; r < leaves_; ++r)
      if (node_[leaves_ + r].key != key(kNever)) node_[leaves_ + r].key = key(time_of(r) + delta);
    rebuild();
  }

  /// Decide for rank r at time t, unless it is queued for earlier already.
  void lower(std::uint32_t r, double t) {
    std::size_t i = std::size_t{leaves_} + r;
    const std::uint64_t k = key(t);
    if (k >= node_[i].key) return;
    node_[i].key = k;
    for (i /= 2; i >= 1; i /= 2) {
      Entry& n = node_[i];
      if (!(k < n.key || (k == n.key && r <= n.rank))) break;  // (time, rank) order
      n = {k, r};
    }
  }

 private:
  static constexpr std::uint32_t kNone = 0xFFFFFFFF;
  // A time as its bits: for times >= 0 (and +infinity, kNever) they order as unsigned integers
  // do, which a comparison on the settle path's dependency chain does faster than as doubles.
  static std::uint64_t key(double time) { return std::bit_cast<std::uint64_t>(time); }
  // best, rank = key, its_rank unless best < bar. Not a branch: which side wins is as good as
  // random. GCC turns a select here into a branch, and masks cost six instructions where x86's
  // conditional moves take two; the settle walk is a large share of a decision, so the two
  // instructions show in a whole search (docs/bench.md).
  static void keep_lower(std::uint64_t& best, std::uint32_t& rank, std::uint64_t bar, std::uint64_t key,
                         std::uint32_t its_rank) {
#if defined(__x86_64__) && defined(__GNUC__)
    __asm__(
        "cmp %[bar], %[best]\n\t"
        "cmovae %[key], %[best]\n\t"
        "cmovae %[its_rank], %[rank]"
        : [best] "+r"(best), [rank] "+r"(rank)
        : [bar] "r"(bar), [key] "r"(key), [its_rank] "r"(its_rank)
        : "cc");
#else
    const std::uint64_t mask = 0 - static_cast<std::uint64_t>(best < bar);
    best = (best & mask) | (key & ~mask);
    rank = (rank & static_cast<std::uint32_t>(mask)) | (its_rank & ~static_cast<std::uint32_t>(mask));
#endif
  }
  struct Entry {
    std::uint64_t key;
    std::uint32_t rank;
  };
  void rebuild() {
    for (std::size_t i = leaves_ - 1; i >= 1; --i) {
      const Entry& left = node_[2 * i];
      const Entry& right = node_[2 * i + 1];
      node_[i] = right.key < left.key ? right : left;
    }
  }

  std::uint32_t leaves_ = 1;
  std::uint32_t taken_ = kNone;
  std::vector<Entry> node_;  ///< node_[1] is the root; node_[leaves_ + r] is rank r's key
};

// The steady state. Once a pipeline fills, the greedy's decisions repeat: every so many of stage
// 0's forwards (the period), each rank runs the same actions, microbatches shifted by the period
// and times by a fixed amount. The watch compares the state (Greedy::state_key) each time stage 0
// starts its 4th, 8th, ... forward with the states 4, 8, ..., 32 forwards back (every period up to
// 8 divides one of those distances, and a state taken every forward was a visible cost); when
// the short form repeats, it keeps the full form and, one period later, compares again. If the
// full state repeats, every decision of that period would be made again in the next one, so the
// period is copied as many times as fits before the cool-down, and the greedy goes on deciding
// from there: everything but the warm-up and the cool-down is copied (docs/bench.md).
//
// It needs exact times: a time shifted by the copy must equal the time the greedy would have
// computed. That holds when every duration is a multiple of 1/1024 and no time reaches 2^40
// (Shape::exact_times); otherwise the watch is off. Memory is not shifted, so it needs nothing.
struct PeriodWatch {
  static constexpr std::uint32_t kStride = 4, kSlots = 8;  // states every kStride forwards, kSlots kept
  struct Point {
    std::uint32_t base = 0xFFFFFFFF;  // stage 0's next forward then
    double time = 0;
    std::vector<double> key;
    std::vector<std::size_t> lengths, cursors;  // programs' lengths, guide cursors
  };
  bool enabled = false;
  std::uint32_t base = 0xFFFFFFFF;  // the last base watched
  std::array<Point, kSlots> ring;   // short forms, by (base / kStride) % kSlots
  bool pending = false;             // a period to confirm: its start and length
  Point start;
  std::vector<double> start_full;
  std::uint32_t period = 0;
  std::vector<std::size_t> scan;  // per rank: the widest guide scan in the period
  std::vector<double> bound;      // per rank: the highest give-up bound in the period
  std::vector<double> scratch;
  std::size_t copied = 0;  // actions copied rather than decided

  void note_scan(std::uint32_t r, std::size_t width) {
    if (pending) scan[r] = std::max(scan[r], width);
  }
  void note_bound(std::uint32_t r, double b) { bound[r] = std::max(bound[r], b); }
};

// List scheduling in time order: a rank decides when it is free and re-decides when something it
// may run becomes ready.
class Greedy {
 public:
  Greedy(const Shape& shape, const GreedyPolicy& policy, GreedyBuffers& buffers)
      : sh_(shape), pol_(policy), microbatches_(shape.microbatches), queue_(shape.ranks) {
    // Only entries below a stage's counters are read, and those have been written.
    const std::size_t ends = std::size_t{sh_.stages} * microbatches_;
    if (buffers.f_end.size() < ends) buffers.f_end.resize(ends);
    if (buffers.i_end.size() < ends) buffers.i_end.resize(ends);
    f_end_ = buffers.f_end.data();
    i_end_ = buffers.i_end.data();
    stage_.resize(sh_.stages);
    for (std::uint32_t s = 0; s < sh_.stages; ++s) {
      StageState& st = stage_[s];
      st.f = sh_.f[s], st.i = sh_.i[s], st.w = sh_.w[s];
      st.fwd_xfer = sh_.fwd_xfer[s], st.bwd_xfer = sh_.bwd_xfer[s];
      st.act = sh_.act[s];
      st.held_i = held(ActionKind::I, s), st.held_w = held(ActionKind::W, s);
      st.rank = sh_.rank_of[s];
    }
    // How long a microbatch's chain lasts at the least after its F or I on stage s ends
    // (last_microbatch_chain): after I(s), W(s), and I(s-1) after its transfer, and so on down to
    // stage 0; after F(s), I(s), and F(s+1) after its transfer, and so on up to the last stage.
    for (std::uint32_t s = 0; s < sh_.stages; ++s) {
      StageState& st = stage_[s];
      st.after_i = st.w;
      if (s > 0) {
        const StageState& down = stage_[s - 1];
        st.after_i = std::max(st.after_i, down.bwd_xfer + down.i + down.after_i);
      }
    }
    for (std::uint32_t s = sh_.stages; s-- > 0;) {
      StageState& st = stage_[s];
      st.after_f = st.i + st.after_i;
      if (s + 1 < sh_.stages) {
        const StageState& up = stage_[s + 1];
        st.after_f = std::max(st.after_f, up.fwd_xfer + up.f + up.after_f);
      }
    }
    for (std::uint32_t r = 0; r < sh_.ranks; ++r) own_.insert(own_.end(), sh_.own[r].begin(), sh_.own[r].end());
    refresh_all_ready();
    rank_.resize(sh_.ranks);
    for (std::uint32_t r = 0; r < sh_.ranks; ++r) {
      rank_[r].mem = rank_[r].peak = sh_.base[r];
      rank_[r].forwards_left = static_cast<std::uint32_t>(sh_.own[r].size()) * microbatches_;
    }
    programs_.swap(buffers.programs);  // storage of an earlier run, if it left any
    programs_.resize(sh_.ranks);
    for (auto& prog : programs_) prog.clear();
    for (auto& prog : programs_) prog.reserve(std::size_t{3} * microbatches_ * sh_.v);
    period_.enabled = pol_.copy_steady_state && sh_.exact_times;
    if (pol_.guide) {
      cursor_.assign(sh_.ranks, 0);
      done_ahead_.assign(sh_.ranks, 0);
      done_.swap(buffers.done);
      done_.resize(sh_.ranks);
      for (std::uint32_t r = 0; r < sh_.ranks; ++r) done_[r].assign(pol_.guide->ranks[r].actions.size(), kNotRun);
    }
  }

  /// Gives up (run() returns false, gave_up() true) once some rank cannot finish by `limit`: a
  /// candidate that cannot beat or tie the best one found so far is not worth finishing.
  void give_up_above(double limit) {
    limit_ = limit;
    // Far wider than the rounding of a running sum of a few million durations.
    screen_margin_ = 1e-6 * std::max(1.0, std::abs(limit));
    for (std::uint32_t r = 0; r < sh_.ranks; ++r) rank_[r].work_left = exact_work_left(r);
  }
  bool gave_up() const { return gave_up_; }
  bool guide_exhausted() const { return guide_exhausted_; }
  bool shadow_parted() const { return shadow_parted_; }
  std::size_t copied() const { return period_.copied; }

  bool run(double& makespan) {
    for (std::uint32_t r = 0; r < sh_.ranks; ++r) queue_.lower(r, 0.0);
    for (;;) {
      queue_.settle();
      if (queue_.empty() || gave_up_ || guide_exhausted_) break;
      const std::uint32_t base = stage_[0].next_f;
      if (period_.enabled && base != period_.base && base < microbatches_ && base % PeriodWatch::kStride == 0) {
        watch_for_period(queue_.top_time());
        if (gave_up_) break;
      }
      const std::uint32_t r = queue_.top();
      const double t = queue_.top_time();
      queue_.take_top();
      decide(t, r);
    }
    makespan = 0;
    if (gave_up_ || guide_exhausted_) return false;
    for (std::uint32_t s = 0; s < sh_.stages; ++s)
      if (stage_[s].next_w < microbatches_) return false;
    for (const RankState& rs : rank_) makespan = std::max(makespan, rs.free);
    return true;
  }

  std::vector<std::vector<Action>>& programs() { return programs_; }
  /// Leaves the run's storage to the next run of the search (the programs only if not taken).
  void give_back(GreedyBuffers& buffers) {
    buffers.programs.swap(programs_);
    buffers.done.swap(done_);
  }
  /// After run(): the highest per-rank peak and the longest rank span, exactly as the timed
  /// simulator and compute_memory measure them (a test checks the two agree).
  double peak() const {
    double highest = rank_.front().peak;
    for (const RankState& rs : rank_) highest = std::max(highest, rs.peak);
    return highest;
  }
  double span() const {
    double longest = 0;
    for (std::uint32_t r = 0; r < sh_.ranks; ++r)
      if (rank_[r].first_start >= 0) longest = std::max(longest, rank_[r].free - rank_[r].first_start);
    return longest;
  }

 private:
  double& f_end(std::uint32_t s, std::uint32_t m) { return f_end_[std::size_t{s} * microbatches_ + m]; }
  double& i_end(std::uint32_t s, std::uint32_t m) { return i_end_[std::size_t{s} * microbatches_ + m]; }

  // When the next I and the next F of stage s can start, as far as their inputs go (kNever: not
  // known yet). Kept per stage and refreshed when one of their inputs changes (run_f, run_i): a
  // decision reads one number per stage instead of gathering ends from two stages' rows.
  double i_ready(std::uint32_t s) const { return stage_[s].i_ready; }
  double f_ready(std::uint32_t s) const { return stage_[s].f_ready; }
  void refresh_i_ready(std::uint32_t s) {
    const std::uint32_t m = stage_[s].next_i;
    double ready = kNever;
    if (m < microbatches_ && m < stage_[s].next_f) {
      ready = f_end(s, m);
      if (s + 1 < sh_.stages)
        ready = stage_[s + 1].next_i <= m ? kNever : std::max(ready, i_end(s + 1, m) + stage_[s].bwd_xfer);
    }
    stage_[s].i_ready = ready;
  }
  void refresh_f_ready(std::uint32_t s) {
    const std::uint32_t m = stage_[s].next_f;
    double ready = kNever;
    if (m < microbatches_)
      ready = s == 0 ? 0.0 : stage_[s - 1].next_f <= m ? kNever : f_end(s - 1, m) + stage_[s].fwd_xfer;
    stage_[s].f_ready = ready;
  }
  // The end of the input gradient that stage s's oldest pending W waits for (kNever: none pending):
  // what oldest_w compares, kept per stage so that a decision does not reach into i_end's rows.
  void refresh_w_due(std::uint32_t s) {
    StageState& st = stage_[s];
    st.w_due = st.next_w < st.next_i ? i_end(s, st.next_w) : kNever;
  }
  void refresh_all_ready() {
    for (std::uint32_t s = 0; s < sh_.stages; ++s) refresh_i_ready(s), refresh_f_ready(s), refresh_w_due(s);
  }

  bool f_fits(std::uint32_t r, std::uint32_t s) const {
    if (sh_.v == 2 && !sh_.first_chunk_of_v(s))  // a second chunk: reserved, or it must fit
      return pol_.reserve_each || fits_under_cap(rank_[r].mem + stage_[s].act, pol_.target_cap);
    double need = stage_[s].act;
    if (sh_.first_chunk_of_v(s)) {
      const std::uint32_t partner = sh_.partner(s);
      if (pol_.reserve_each) {
        need += stage_[partner].act;
      } else {
        // Rank r's second chunk lives about 2r+1 slots of V-Min's 6-slot period, so it holds
        // about (2r+2)/6 microbatches in flight: keep room for that many.
        const std::uint32_t want = (2 * r + 7) / 6;
        const std::uint32_t held = stage_[partner].next_f - stage_[partner].next_i;
        need += stage_[partner].act * (held < want ? want - held : 0);
      }
    }
    return fits_under_cap(rank_[r].mem + rank_[r].reserved + need, pol_.target_cap);
  }

  // The guided decision (GreedyPolicy::guide): the guide's order first, then any ready action
  // among the next `lookahead` not yet run; each stage's F, I and W still run in microbatch order.
  void decide_guided(double t, std::uint32_t r) {
    const std::vector<Action>& prog = pol_.guide->ranks[r].actions;
    std::vector<std::uint8_t>& done = done_[r];
    std::size_t& first = cursor_[r];
    for (; first < prog.size() && (done[first] != kNotRun || !ours(prog[first])); ++first)
      done_ahead_[r] -= done[first] == kRun;
    double next = kNever;
    std::uint32_t seen = 0;
    std::size_t k = first;
    for (; k < prog.size() && seen <= pol_.lookahead; ++k) {
      if (done[k] != kNotRun || !ours(prog[k])) continue;
      ++seen;
      const double ready = guided_ready(t, r, prog[k], k == first);
      if (ready <= t) {
        done[k] = kRun;
        ++done_ahead_[r];
        period_.note_scan(r, k + 1 - first);
        const std::uint32_t s = prog[k].stage;
        if (prog[k].kind == ActionKind::F) return run_f(t, r, s);
        if (prog[k].kind == ActionKind::I) return run_i(t, r, s);
        return run_w(t, r, s);
      }
      next = std::min(next, ready);
    }
    // The rank waits. Would a wider window (GreedyPolicy::shadow_lookahead) have run something now,
    // or woken the rank sooner? Either is the first step where the two runs part.
    for (; k < prog.size() && seen <= pol_.shadow_lookahead && !shadow_parted_; ++k) {
      if (done[k] != kNotRun || !ours(prog[k])) continue;
      ++seen;
      shadow_parted_ = guided_ready(t, r, prog[k], false) < next;
    }
    // A scan that reached the end of a guide cut short (GreedyPolicy::guide_is_prefix) with its
    // window not full, or its shadow window while the runs have not parted, cannot tell what the
    // rest of the guide would change: the run stops.
    if (pol_.guide_is_prefix && k == prog.size() &&
        (seen <= pol_.lookahead || (seen <= pol_.shadow_lookahead && !shadow_parted_))) {
      guide_exhausted_ = true;
      return;
    }
    period_.note_scan(r, k - first);
    if (next != kNever) queue_.lower(r, next);
  }
  // When the guide's action `a` (at the cursor when in_order) can start, as far as is known now.
  double guided_ready(double t, std::uint32_t r, Action a, bool in_order) {
    const std::uint32_t s = a.stage, m = a.microbatch();
    switch (a.kind) {
      case ActionKind::F:
        return stage_[s].next_f == m && guided_f_fits(r, s, in_order) ? f_ready(s) : kNever;
      case ActionKind::I:
        return stage_[s].next_i == m ? i_ready(s) : kNever;
      case ActionKind::W:
        return stage_[s].next_w == m && stage_[s].next_i > m ? t : kNever;
      default:
        return kNever;
    }
  }
  // Under the guide, a forward must fit the cap. One taken ahead of the guide's order, if it is a
  // first chunk's, also leaves room for one second-chunk forward, so that running ahead can never
  // fill a rank with half-finished microbatches; in the guide's order it needs only to fit.
  bool guided_f_fits(std::uint32_t r, std::uint32_t s, bool in_order) const {
    double need = stage_[s].act + (!in_order && sh_.first_chunk_of_v(s) ? stage_[sh_.partner(s)].act : 0.0);
    return fits_under_cap(rank_[r].mem + need, pol_.target_cap);
  }

  void decide(double t, std::uint32_t r) {
    if (pol_.guide && !(pol_.free_cooldown && rank_[r].forwards_left == 0)) return decide_guided(t, r);
    double next = kNever;
    const std::uint32_t* own = own_of(r);
    // 0. with forward_after_input_grad, right after an I: a forward that is ready and fits
    if (pol_.forward_after_input_grad && rank_[r].after_input_grad)
      for (std::uint32_t k = 0; k < sh_.v; ++k)
        if (f_ready(own[k]) <= t && f_fits(r, own[k])) return run_f(t, r, own[k]);
    // 0'. with make_room_first: a W when a ready forward does not fit
    if (pol_.make_room_first) {
      const std::uint32_t w = oldest_w(r);
      if (w != kNoStage)
        for (std::uint32_t k = 0; k < sh_.v; ++k)
          if (f_ready(own[k]) <= t && !f_fits(r, own[k])) return run_w(t, r, w);
    }
    // 1. an input-gradient backward that is ready, highest stage first (nearest the loss), or with
    // GreedyPolicy::first_chunk_input_grad_first the lowest
    for (std::uint32_t k = 0; k < sh_.v; ++k) {
      const std::uint32_t s = pol_.first_chunk_input_grad_first ? own[sh_.v - 1 - k] : own[k];
      double ready = i_ready(s);
      if (ready <= t) return run_i(t, r, s);
      next = std::min(next, ready);
    }
    // With wait_for_input_grad: nothing that would still run when the next known I is ready (with
    // only_forwards_wait, no forward; a W may still run). With wait_for_late_forward, nothing
    // either that would still run when the second chunk's next forward is ready (V).
    double due = pol_.wait_for_input_grad ? next : kNever;
    if (pol_.wait_for_late_forward && sh_.v == 2) {
      const std::uint32_t late = own[0];  // the rank's higher stage: its second chunk
      const double ready = f_ready(late);
      if (ready > t && ready != kNever && f_fits(r, late)) due = std::min(due, ready);
    }
    auto ends_in_time = [&](double duration) { return t + duration <= due + kSameTime; };
    // 2. W before F when the policy says so
    std::uint32_t w_stage = oldest_w(r);
    // With only_forwards_wait a W runs even when it holds up a due I, unless balance_idle says
    // the rank can still afford to wait: its idle time, with this wait, would stay within the most
    // idle time of any rank so far.
    auto w_in_time = [&](std::uint32_t s) {
      if (ends_in_time(stage_[s].w)) return true;
      if (!pol_.only_forwards_wait) return false;
      return !pol_.balance_idle || rank_[r].idle + (due - t) > most_idle_ + kSameTime;
    };
    if (pol_.weight_first && w_stage != kNoStage && w_in_time(w_stage)) return run_w(t, r, w_stage);
    // 3. a forward that is ready and fits
    auto try_f = [&](std::uint32_t s) {
      if (!f_fits(r, s)) return false;
      double ready = f_ready(s);
      if (ready <= t && !ends_in_time(stage_[s].f)) return false;
      if (ready <= t) {
        run_f(t, r, s);
        return true;
      }
      next = std::min(next, ready);
      return false;
    };
    if (pol_.late_chunk_first) {
      for (std::uint32_t k = 0; k < sh_.v; ++k)
        if (try_f(own[k])) return;
    } else {
      for (std::uint32_t k = sh_.v; k-- > 0;)
        if (try_f(own[k])) return;
    }
    // 4. a deferred W
    if (w_stage != kNoStage && w_in_time(w_stage)) return run_w(t, r, w_stage);
    if (next != kNever) queue_.lower(r, next);
    // else: it waits until a producer on another rank is scheduled (wake below)
  }

  static constexpr std::uint32_t kNoStage = 0xFFFFFFFF;
  std::uint32_t oldest_w(std::uint32_t r) const {
    std::uint32_t best = kNoStage;
    double best_end = kNever;
    const std::uint32_t* own = own_of(r);
    for (std::uint32_t k = 0; k < sh_.v; ++k)
      if (stage_[own[k]].w_due < best_end) best_end = stage_[own[k]].w_due, best = own[k];
    return best;
  }

  void occupy(std::uint32_t r, double start, double duration, Action a) {
    if (rank_[r].first_start < 0) {
      rank_[r].first_start = start;
    } else if (start > rank_[r].free) {
      rank_[r].idle += start - rank_[r].free;
      most_idle_ = std::max(most_idle_, rank_[r].idle);
    }
    programs_[r].push_back(a);
    rank_[r].free = start + duration;
    queue_.lower(r, rank_[r].free);
    // Every later action of rank r starts after this one ends, so the rank ends no sooner than
    // that plus the work it has left, and its span is no shorter than that minus its first start.
    // A running total (RankState::work_left) screens; near the mark the work left is recounted
    // from the counters, so rounding in the running total never decides.
    if (limit_ != kNever) {
      const double from = origin(r);
      if (period_.pending) period_.note_bound(r, rank_[r].free + exact_work_left(r) - from);
      rank_[r].work_left -= duration;
      if (rank_[r].free + rank_[r].work_left - from > limit_ - screen_margin_) {
        rank_[r].work_left = exact_work_left(r);
        gave_up_ = gave_up_ || rank_[r].free + rank_[r].work_left - from > limit_;
      }
    }
  }
  // What the give-up mark is measured from on rank r: 0 when the search minimises the makespan;
  // its first start when it minimises the longest rank span (a rank that has not started yet
  // starts no sooner than it is free, and then has all its work to do).
  double origin(std::uint32_t r) const {
    if (!sh_.span_objective) return 0.0;
    return rank_[r].first_start >= 0 ? rank_[r].first_start : rank_[r].free;
  }
  // The last microbatch's forward or input gradient on some stage has just been placed, and `end`
  // is when its chain can end at the earliest: the forwards up to the last stage, the input
  // gradients back to stage 0 and the weight gradients after them, each after its transfer
  // (StageState::after_f, after_i). No run that gets there can finish sooner, whatever the ranks
  // do meanwhile. The work-left bound above cannot see this: in a cool-down ranks idle waiting for
  // that chain, so a losing run would otherwise give up only near its end (docs/bench.md).
  // Under the span objective the chain ends on one of the ranks, each of which has started by
  // then or will start later: its span is at least `end` minus the latest first start, known once
  // every rank has started (before that the chain says nothing about spans).
  void last_microbatch_chain(double end) {
    if (limit_ == kNever) return;
    double from = 0;
    if (sh_.span_objective)
      for (const RankState& rs : rank_) {
        if (rs.first_start < 0) return;
        from = std::max(from, rs.first_start);
      }
    if (end - from > limit_) gave_up_ = true;
  }
  // The work rank r has left, from the counters (a few products for one or two stages).
  double exact_work_left(std::uint32_t r) const {
    double left = 0;
    const std::uint32_t* own = own_of(r);
    for (std::uint32_t k = 0; k < sh_.v; ++k) {
      const StageState& st = stage_[own[k]];
      left +=
          (microbatches_ - st.next_f) * st.f + (microbatches_ - st.next_i) * st.i + (microbatches_ - st.next_w) * st.w;
    }
    return left;
  }
  void wake(std::uint32_t stage, double at) {
    const std::uint32_t r = stage_[stage].rank;
    queue_.lower(r, std::max(at, rank_[r].free));
  }

  // The simulator's memory rule (sim/memory.hpp). The greedy applies a free when it decides the
  // action rather than at its end: with one action at a time per rank, nothing can allocate on
  // that rank in between, so the peaks are the same.
  double held(ActionKind kind, std::uint32_t s) const { return memory_delta(kind, sh_.act[s], sh_.wgt[s]).amount; }

  void run_f(double t, std::uint32_t r, std::uint32_t s) {
    const std::uint32_t m = stage_[s].next_f++;
    --rank_[r].forwards_left;
    if (pol_.reserve_each && sh_.first_chunk_of_v(s)) rank_[r].reserved += stage_[sh_.partner(s)].act;
    if (pol_.reserve_each && sh_.v == 2 && !sh_.first_chunk_of_v(s)) rank_[r].reserved -= stage_[s].act;
    rank_[r].mem += stage_[s].act;  // held(ActionKind::F, s)
    rank_[r].after_input_grad = false;
    rank_[r].peak = std::max(rank_[r].peak, rank_[r].mem);
    occupy(r, t, stage_[s].f, Action::make(ActionKind::F, static_cast<std::uint16_t>(s), m));
    f_end(s, m) = rank_[r].free;
    if (m + 1 == microbatches_) last_microbatch_chain(rank_[r].free + stage_[s].after_f);
    refresh_f_ready(s);
    refresh_i_ready(s);
    if (s + 1 < sh_.stages) refresh_f_ready(s + 1);
    if (s + 1 < sh_.stages && stage_[s + 1].rank != r) wake(s + 1, rank_[r].free + stage_[s + 1].fwd_xfer);
  }
  void run_i(double t, std::uint32_t r, std::uint32_t s) {
    const std::uint32_t m = stage_[s].next_i++;
    rank_[r].mem += stage_[s].held_i;
    rank_[r].after_input_grad = true;
    occupy(r, t, stage_[s].i, Action::make(ActionKind::I, static_cast<std::uint16_t>(s), m));
    i_end(s, m) = rank_[r].free;
    if (m + 1 == microbatches_) last_microbatch_chain(rank_[r].free + stage_[s].after_i);
    if (stage_[s].next_w == m) stage_[s].w_due = rank_[r].free;
    refresh_i_ready(s);
    if (s > 0) refresh_i_ready(s - 1);
    if (s > 0 && stage_[s - 1].rank != r) wake(s - 1, rank_[r].free + stage_[s - 1].bwd_xfer);
  }
  void run_w(double t, std::uint32_t r, std::uint32_t s) {
    const std::uint32_t m = stage_[s].next_w++;
    refresh_w_due(s);
    rank_[r].mem += stage_[s].held_w;
    occupy(r, t, stage_[s].w, Action::make(ActionKind::W, static_cast<std::uint16_t>(s), m));
  }

  // ---- The steady state (see PeriodWatch): a stretch of decisions that repeats is copied ----

  // The state the decisions depend on, with counters taken relative to stage 0's next forward
  // `base` and times relative to `t`: what must be equal at two points for everything after them
  // to repeat, shifted. The short form (full = false) holds the counters, memory, each rank's free
  // and queued times; the full form adds the end times the next decisions may still read (each
  // stage's forwards from the oldest its input gradient or the next stage still needs, its input
  // gradients from the oldest its W or the stage below still needs) and, under a guide, which of
  // the guide's actions past each rank's cursor have run.
  //
  // A time already past (at or before t) is kept as 0: decisions happen in time order, so the
  // greedy only ever asks of it whether it is past, and a stage's ends from the warm-up, still to be
  // read long after, would otherwise never repeat. The exception is a V rank's pending W's: the
  // oldest one goes first (oldest_w), which compares the ends of its two stages' input gradients.
  void state_key(std::uint32_t base, double t, bool full, std::vector<double>& key) const {
    auto since = [t](double time) { return std::max(time - t, 0.0); };
    key.clear();
    const double b = base;
    for (std::uint32_t s = 0; s < sh_.stages; ++s) {
      key.push_back(stage_[s].next_f - b);
      key.push_back(stage_[s].next_i - b);
      key.push_back(stage_[s].next_w - b);
    }
    for (std::uint32_t r = 0; r < sh_.ranks; ++r) {
      key.push_back(rank_[r].mem);
      key.push_back(rank_[r].reserved);
      key.push_back(since(rank_[r].free));
      key.push_back(queue_.time_of(r) - t);
      key.push_back(rank_[r].first_start < 0 ? 1.0 : 0.0);
      if (pol_.forward_after_input_grad) key.push_back(rank_[r].after_input_grad ? 1.0 : 0.0);
      if (pol_.balance_idle) key.push_back(most_idle_ - rank_[r].idle);
    }
    key.push_back(shadow_parted_ ? 1.0 : 0.0);
    if (!full) return;
    for (std::uint32_t s = 0; s < sh_.stages; ++s) {
      const std::uint32_t f_lo = oldest_forward_read(s), i_lo = oldest_input_grad_read(s);
      key.push_back(f_lo - b);
      for (std::uint32_t m = f_lo; m < stage_[s].next_f; ++m)
        key.push_back(since(f_end_[std::size_t{s} * microbatches_ + m]));
      key.push_back(i_lo - b);
      for (std::uint32_t m = i_lo; m < stage_[s].next_i; ++m) {
        const double end = i_end_[std::size_t{s} * microbatches_ + m];
        key.push_back(sh_.v == 2 && m >= stage_[s].next_w ? end - t : since(end));
      }
    }
    if (pol_.guide)
      for (std::uint32_t r = 0; r < sh_.ranks; ++r) {
        key.push_back(done_ahead_[r]);
        for (std::size_t k = cursor_[r], found = 0; found < done_ahead_[r]; ++k)
          if (done_[r][k] == kRun) key.push_back(static_cast<double>(k - cursor_[r])), ++found;
      }
  }
  // The oldest forward end of stage s that a decision may still read (its next I's, and the next
  // stage's next F), and the same for input-gradient ends (its next W's, the stage below's next I).
  std::uint32_t oldest_forward_read(std::uint32_t s) const {
    return s + 1 < sh_.stages ? std::min(stage_[s].next_i, stage_[s + 1].next_f) : stage_[s].next_i;
  }
  std::uint32_t oldest_input_grad_read(std::uint32_t s) const {
    return s > 0 ? std::min(stage_[s].next_w, stage_[s - 1].next_i) : stage_[s].next_w;
  }

  // Called at the top of the loop each time stage 0 has started a new forward (`base`, a multiple
  // of PeriodWatch::kStride), with t the time of the next decision.
  void watch_for_period(double t) {
    PeriodWatch& w = period_;
    const std::uint32_t base = w.base = stage_[0].next_f;
    state_key(base, t, false, w.scratch);
    if (w.pending && base == w.start.base + w.period) {
      std::vector<double> full;
      state_key(base, t, true, full);
      w.pending = false;
      if (full == w.start_full) {
        skip_periods(base, t);
        return;
      }
    } else if (w.pending && base > w.start.base + w.period) {
      w.pending = false;
    }
    // A repeat of the short form some periods back: remember the full form here, and confirm it
    // one period later.
    if (!w.pending)
      for (std::uint32_t k = 1; k <= PeriodWatch::kSlots && k * PeriodWatch::kStride <= base; ++k) {
        const std::uint32_t period = k * PeriodWatch::kStride;
        const PeriodWatch::Point& old = w.ring[(base / PeriodWatch::kStride - k) % PeriodWatch::kSlots];
        if (old.base != base - period || old.key != w.scratch) continue;
        w.pending = true;
        w.period = period;
        w.start.base = base;
        w.start.time = t;
        w.start.lengths.resize(sh_.ranks);
        for (std::uint32_t r = 0; r < sh_.ranks; ++r) w.start.lengths[r] = programs_[r].size();
        w.start.cursors = cursor_;
        state_key(base, t, true, w.start_full);
        w.scan.assign(sh_.ranks, 0);
        w.bound.assign(sh_.ranks, -kNever);
        break;
      }
    PeriodWatch::Point& slot = w.ring[(base / PeriodWatch::kStride) % PeriodWatch::kSlots];
    slot.base = base;
    slot.key.swap(w.scratch);
  }

  // The state at `base`, time t, repeats the state one period earlier (PeriodWatch::start), all
  // times shifted by the same amount: the decisions of that period would be made again, shifted,
  // period after period. Copies them as many times as is safe (no counter reaches the end, the
  // guide repeats as far as it will be read, and no rank's bound passes the give-up mark).
  void skip_periods(std::uint32_t base, double t) {
    PeriodWatch& w = period_;
    const std::uint32_t P = w.period;
    const double delta = t - w.start.time;
    std::uint64_t n = (microbatches_ - 1 - base) / P;  // stage 0 leads every counter
    if (pol_.guide)
      for (std::uint32_t r = 0; r < sh_.ranks && n > 0; ++r) n = std::min(n, guide_repeats(r, P));
    if (limit_ != kNever)
      for (std::uint32_t r = 0; r < sh_.ranks && n > 0; ++r) {
        double work = 0;  // rank r's work in one period: every counter moves P
        for (std::uint32_t s : sh_.own[r]) work += P * (sh_.f[s] + sh_.i[s] + sh_.w[s]);
        const double rise = delta - work;  // how much its bound rises per period
        if (rise <= 0) continue;
        const double periods = std::floor((limit_ - w.bound[r]) / rise);  // +inf converts to no integer
        auto n_r = periods >= static_cast<double>(n) ? n : static_cast<std::uint64_t>(std::max(0.0, periods));
        while (n_r > 0 && w.bound[r] + static_cast<double>(n_r) * rise > limit_) --n_r;
        n = std::min(n, n_r);
      }
    if (n == 0) return;
    const auto shift_mb = static_cast<std::uint32_t>(n * P);
    const double shift_t = static_cast<double>(n) * delta;
    for (std::uint32_t r = 0; r < sh_.ranks; ++r) {
      std::vector<Action>& prog = programs_[r];
      const std::size_t from = w.start.lengths[r], to = prog.size(), len = to - from;
      prog.resize(to + n * len);
      for (std::size_t k = to; k < prog.size(); ++k) {
        prog[k] = prog[k - len];
        prog[k].index += P;
      }
      rank_[r].forwards_left -= static_cast<std::uint32_t>(
          n * static_cast<std::size_t>(std::count_if(prog.begin() + static_cast<std::ptrdiff_t>(from),
                                                     prog.begin() + static_cast<std::ptrdiff_t>(to),
                                                     [](const Action& a) { return a.kind == ActionKind::F; })));
      w.copied += n * len;
      rank_[r].free += shift_t;
    }
    for (std::uint32_t s = 0; s < sh_.stages; ++s) {
      // Downwards, so that no end is overwritten before it is copied.
      for (std::uint32_t m = stage_[s].next_f; m-- > oldest_forward_read(s);)
        f_end(s, m + shift_mb) = f_end(s, m) + shift_t;
      for (std::uint32_t m = stage_[s].next_i; m-- > oldest_input_grad_read(s);)
        i_end(s, m + shift_mb) = i_end(s, m) + shift_t;
    }
    for (StageState& st : stage_) st.next_f += shift_mb, st.next_i += shift_mb, st.next_w += shift_mb;
    queue_.shift(shift_t);
    refresh_all_ready();
    if (pol_.guide)
      for (std::uint32_t r = 0; r < sh_.ranks; ++r) {
        std::vector<std::uint8_t>& done = done_[r];
        const std::vector<Action>& guide = pol_.guide->ranks[r].actions;
        const std::size_t cur = cursor_[r], step = n * (cur - w.start.cursors[r]);
        const std::size_t extent = run_ahead_extent(r);
        const std::vector<std::uint8_t> ahead(done.begin() + cur, done.begin() + cur + extent);
        for (std::size_t k = cur; k < cur + step; ++k)
          if (ours(guide[k])) done[k] = kRun;
        std::copy(ahead.begin(), ahead.end(), done.begin() + cur + step);
        cursor_[r] = cur + step;
      }
    if (limit_ != kNever)
      for (std::uint32_t r = 0; r < sh_.ranks; ++r) rank_[r].work_left = exact_work_left(r);
  }

  // Under a guide: how far past rank r's cursor its last guide action run ahead lies (0: none).
  std::size_t run_ahead_extent(std::uint32_t r) const {
    std::size_t extent = 0;
    for (std::size_t k = cursor_[r], found = 0; found < done_ahead_[r]; ++k)
      if (done_[r][k] == kRun) ++found, extent = k + 1 - cursor_[r];
    return extent;
  }

  // Under a guide: how many more periods rank r's guide repeats for, as far as the decisions of
  // those periods will read it (the period's own stretch, plus the widest scan past the cursor).
  std::uint64_t guide_repeats(std::uint32_t r, std::uint32_t P) const {
    const std::vector<Action>& prog = pol_.guide->ranks[r].actions;
    const std::size_t from = period_.start.cursors[r], cur = cursor_[r], step = cur - from;
    if (step == 0) return 0;
    const std::size_t extent = std::max(period_.scan[r], run_ahead_extent(r));
    // The first y where the guide stops repeating itself one period on.
    std::size_t y = from;
    for (; y + step < prog.size(); ++y) {
      Action a = prog[y];
      if (a.has_microbatch()) a.index += P;
      if (!(prog[y + step] == a)) break;
    }
    // Period q reads up to cur + extent + (q - 1) * step, which must stay below y.
    if (y < cur + extent) return 0;
    return (y - cur - extent) / step + 1;
  }

  // Stage s as a decision reads it, in one place: its durations, memory and rank (Shape's, whose
  // vectors sit behind a reference and are reloaded after every store of the greedy), and the
  // greedy's counters and ready times for it. One record per stage and per rank rather than a
  // vector per field: a decision touches a few records, not a dozen vectors.
  struct StageState {
    double f, i, w;                             // durations
    double fwd_xfer, bwd_xfer;                  // as Shape's
    double act, held_i, held_w;                 // M_B, and the memory an I and a W change
    double f_ready = kNever, i_ready = kNever;  // refresh_f_ready, refresh_i_ready
    double w_due = kNever;                      // refresh_w_due
    double after_f = 0, after_i = 0;            // last_microbatch_chain
    std::uint32_t rank;
    std::uint32_t next_f = 0, next_i = 0, next_w = 0;  // the next microbatch of each kind
  };
  struct RankState {
    double mem = 0, peak = 0;         // memory held now, and at most so far
    double first_start = -1;          // when its first action started (-1: none yet)
    double reserved = 0;              // second-chunk room kept (GreedyPolicy::reserve_each)
    double free = 0;                  // when its last action ends
    double work_left = 0;             // a running total of the work it has left (occupy)
    std::uint32_t forwards_left = 0;  // GreedyPolicy::free_cooldown
    bool after_input_grad = false;    // its last F or I was an I (GreedyPolicy::forward_after_input_grad)
    double idle = 0;                  // time it has waited since its first action (GreedyPolicy::balance_idle)
  };
  const std::uint32_t* own_of(std::uint32_t r) const { return own_.data() + std::size_t{r} * sh_.v; }

  double most_idle_ = 0;  // the most any rank has waited since its first action (balance_idle)
  const Shape& sh_;
  const GreedyPolicy& pol_;
  const std::uint32_t microbatches_;
  std::vector<StageState> stage_;
  std::vector<std::uint32_t> own_;  // rank r's stages at [r * v, (r + 1) * v), highest first
  double* f_end_;                   // GreedyBuffers: [stage * microbatches_ + microbatch]
  double* i_end_;
  std::vector<RankState> rank_;
  std::vector<std::vector<Action>> programs_;
  // Guided: the first action of the guide not yet run, which of the guide's actions have run, and
  // how many past the cursor have run.
  static constexpr std::uint8_t kNotRun = 0, kRun = 1;
  // Only F, I and W are the greedy's to run: other steps of a guide (patterns align ranks with idle
  // steps) count as done.
  static bool ours(const Action& a) {
    return a.kind == ActionKind::F || a.kind == ActionKind::I || a.kind == ActionKind::W;
  }
  std::vector<std::size_t> cursor_;
  std::vector<std::vector<std::uint8_t>> done_;
  std::vector<std::uint32_t> done_ahead_;
  PeriodWatch period_;
  DecisionQueue queue_;
  double limit_ = kNever;
  bool shadow_parted_ = false;  // GreedyPolicy::shadow_lookahead
  double screen_margin_ = 0;
  bool gave_up_ = false;
  bool guide_exhausted_ = false;  // GreedyPolicy::guide_is_prefix
};

}  // namespace

GreedyRun greedy_run(const Shape& shape, const GreedyPolicy& policy, double give_up_above, GreedyBuffers* buffers) {
  GreedyBuffers own;
  GreedyBuffers& storage = buffers ? *buffers : own;
  Greedy g(shape, policy, storage);
  g.give_up_above(give_up_above);
  GreedyRun out;
  out.finished = g.run(out.makespan);
  out.gave_up = g.gave_up();
  out.guide_exhausted = g.guide_exhausted();
  out.same_with_shadow_lookahead = policy.guide && policy.shadow_lookahead > policy.lookahead && !g.shadow_parted();
  for (const auto& program : g.programs()) out.placed += program.size();
  out.copied = g.copied();
  if (out.finished) {
    out.peak = g.peak();
    out.span = g.span();
    out.programs = std::move(g.programs());
  }
  g.give_back(storage);
  return out;
}

bool greedy_schedule(const AutoParams& p, const GreedyPolicy& policy, Schedule& out, double& makespan,
                     double give_up_above) {
  check_params(p);
  const Shape shape(p);
  GreedyRun run = greedy_run(shape, policy, give_up_above);
  makespan = run.makespan;
  if (!run.finished) return false;
  out = schedule_of(p, std::move(run.programs));
  return true;
}

}  // namespace ppsched::auto_detail
